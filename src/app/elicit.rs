//! An MCP server's elicitation asked on the REPL ([`ask`]): accept, decline or cancel, then
//! each field of the requested schema in the server's order, one question each.
//!
//! A question names the field, says whether it is required, shows its title and description,
//! what it takes (a whole number from 1 to 100, an email address, yes or no, …), its choices
//! numbered (plain `enum`, legacy `enumNames`, titled `oneOf` / `anyOf` of `{const, title}`,
//! multi-selects with `items.enum` or `items.anyOf`) and its default. Enter keeps the default
//! (the handler fills it in) or leaves an optional field out; a required field without a
//! default is asked again. An answer is checked against the field's type and limits and,
//! when it does not fit, the question is asked again with the reason. A choice is taken by
//! its number, its value or its title; a multi-select takes several, separated by commas,
//! and is sent as an array.

use serde_json::{Map, Value};

use crate::mcp::{Elicitation, Elicited};
use crate::vocab::ui::Ui;

/// One choice of an enum field: the value sent, and the title shown when the schema has one.
struct Choice {
    value: Value,
    title: Option<String>,
}

impl Choice {
    /// What the user sees for it.
    fn shown(&self) -> String {
        self.title.clone().unwrap_or_else(|| plain(&self.value))
    }
}

/// What a field takes.
enum Kind {
    Text {
        min: Option<u64>,
        max: Option<u64>,
        format: Option<String>,
    },
    Integer {
        min: Option<f64>,
        max: Option<f64>,
    },
    Number {
        min: Option<f64>,
        max: Option<f64>,
    },
    Boolean,
    One(Vec<Choice>),
    Many {
        choices: Vec<Choice>,
        min: Option<u64>,
        max: Option<u64>,
    },
}

/// One field of the requested schema.
struct Field {
    name: String,
    /// Title and description, as given.
    label: Option<String>,
    kind: Kind,
    required: bool,
    default: Option<Value>,
}

/// Asks for `request` on the REPL: declined or cancelled, or the content typed in.
pub async fn ask(ui: &dyn Ui, server: &str, request: &Elicitation) -> Elicited {
    let question = format!(
        "[mcp {server}] {} — answer it? (y = fill in, n = decline, c = cancel)",
        request.message
    );
    match ui.ask(&question).await.map(|a| a.trim().to_lowercase()) {
        None => return Elicited::Cancel,
        Some(a) if a.starts_with('c') => return Elicited::Cancel,
        Some(a) if !a.starts_with('y') => return Elicited::Decline,
        Some(_) => {}
    }
    let mut content = Map::new();
    for field in fields(&request.schema, &request.order) {
        match answer(ui, &field).await {
            None => return Elicited::Cancel,
            Some(Some(value)) => {
                content.insert(field.name, value);
            }
            Some(None) => {}
        }
    }
    Elicited::Accept(Value::Object(content))
}

/// Asks for one field until the answer fits: `None` when the user gave no answer at all
/// (cancel), `Some(None)` when the field is left out.
async fn answer(ui: &dyn Ui, field: &Field) -> Option<Option<Value>> {
    let question = field.question();
    let mut asked = question.clone();
    loop {
        let typed = ui.ask(&asked).await?;
        let typed = typed.trim();
        let problem = if typed.is_empty() {
            if !field.required || field.default.is_some() {
                return Some(None);
            }
            format!("{} is required", field.name)
        } else {
            match field.parse(typed) {
                Ok(v) => return Some(Some(v)),
                Err(e) => e,
            }
        };
        asked = format!("{} — {problem}; again:", question.trim_end_matches(':'));
    }
}

/// The schema's fields, in `order` (the server's), then any it leaves out.
fn fields(schema: &Value, order: &[String]) -> Vec<Field> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut names: Vec<&String> = order.iter().filter(|n| props.contains_key(*n)).collect();
    names.extend(props.keys().filter(|k| !order.contains(k)));
    names
        .into_iter()
        .map(|name| Field::new(name, &props[name], required.contains(&name.as_str())))
        .collect()
}

/// The choices of a schema (`enum` with `enumNames`, or `oneOf` / `anyOf` of
/// `{const, title}`); `None` without any.
fn choices(schema: &Value) -> Option<Vec<Choice>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        let title = |i: usize| names?.get(i)?.as_str().map(str::to_string);
        let list = values.iter().enumerate().map(|(i, v)| Choice {
            value: v.clone(),
            title: title(i),
        });
        return Some(list.collect());
    }
    let titled = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    let list = titled.iter().filter_map(|c| {
        Some(Choice {
            value: c.get("const")?.clone(),
            title: c.get("title").and_then(Value::as_str).map(str::to_string),
        })
    });
    Some(list.collect())
}

impl Field {
    fn new(name: &str, prop: &Value, required: bool) -> Field {
        let text = |k: &str| prop.get(k).and_then(Value::as_str).map(str::to_string);
        let count = |k: &str| prop.get(k).and_then(Value::as_u64);
        let bound = |k: &str| prop.get(k).and_then(Value::as_f64);
        let ty = prop.get("type").and_then(Value::as_str).unwrap_or("string");
        let kind = if ty == "array" {
            Kind::Many {
                choices: prop.get("items").and_then(choices).unwrap_or_default(),
                min: count("minItems"),
                max: count("maxItems"),
            }
        } else if let Some(list) = choices(prop) {
            Kind::One(list)
        } else {
            match ty {
                "integer" => Kind::Integer {
                    min: bound("minimum"),
                    max: bound("maximum"),
                },
                "number" => Kind::Number {
                    min: bound("minimum"),
                    max: bound("maximum"),
                },
                "boolean" => Kind::Boolean,
                _ => Kind::Text {
                    min: count("minLength"),
                    max: count("maxLength"),
                    format: text("format"),
                },
            }
        };
        let label = match (text("title"), text("description")) {
            (Some(t), Some(d)) if t != d => Some(format!("{t}: {d}")),
            (t, d) => t.or(d),
        };
        Field {
            name: name.to_string(),
            label,
            kind,
            required,
            default: prop.get("default").filter(|d| !d.is_null()).cloned(),
        }
    }

    /// The question for this field, ending in `:`.
    fn question(&self) -> String {
        let mut q = format!("  {}", self.name);
        if self.required {
            q.push_str(" (required)");
        }
        if let Some(label) = &self.label {
            q.push_str(&format!(" — {label}"));
        }
        let takes = self.takes();
        if !takes.is_empty() {
            q.push_str(&format!(" [{takes}]"));
        }
        if let Some(d) = &self.default {
            q.push_str(&format!(" default {}", self.shown(d)));
        }
        q.push(':');
        q
    }

    /// What the field takes, in words (empty for plain text).
    fn takes(&self) -> String {
        let numbered = |choices: &[Choice]| {
            let list: Vec<String> = choices
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{} {}", i + 1, c.shown()))
                .collect();
            list.join(", ")
        };
        match &self.kind {
            Kind::Text { min, max, format } => {
                let mut parts: Vec<String> = format.iter().map(|f| format_words(f)).collect();
                parts.extend(limits(*min, *max, "characters"));
                parts.join(", ")
            }
            Kind::Integer { min, max } => with_range("a whole number", *min, *max),
            Kind::Number { min, max } => with_range("a number", *min, *max),
            Kind::Boolean => "y or n".into(),
            Kind::One(choices) => format!("pick one: {}", numbered(choices)),
            Kind::Many { choices, min, max } => {
                let how_many = limits(*min, *max, "").unwrap_or_else(|| "any number ".into());
                let of = if choices.is_empty() {
                    String::new()
                } else {
                    format!(": {}", numbered(choices))
                };
                format!("pick {}, separated by commas{of}", how_many.trim_end())
            }
        }
    }

    /// A default (or any value of this field) as the user would type it.
    fn shown(&self, value: &Value) -> String {
        let choices = match &self.kind {
            Kind::One(c) | Kind::Many { choices: c, .. } => c.as_slice(),
            _ => &[],
        };
        let one = |v: &Value| {
            choices
                .iter()
                .find(|c| c.value == *v)
                .map(Choice::shown)
                .unwrap_or_else(|| plain(v))
        };
        match value {
            Value::Array(items) => items.iter().map(one).collect::<Vec<_>>().join(", "),
            Value::Bool(b) => if *b { "y" } else { "n" }.into(),
            v => one(v),
        }
    }

    /// The typed answer as the JSON value the field takes, or why it does not fit.
    fn parse(&self, typed: &str) -> Result<Value, String> {
        match &self.kind {
            Kind::Text { min, max, format } => {
                let n = typed.chars().count() as u64;
                check_count(n, *min, *max, "characters")?;
                if let Some(f) = format {
                    check_format(f, typed)?;
                }
                Ok(Value::String(typed.to_string()))
            }
            Kind::Integer { min, max } => {
                let n: i64 = typed
                    .parse()
                    .map_err(|_| format!("{typed:?} is not a whole number"))?;
                check_range(n as f64, *min, *max)?;
                Ok(Value::from(n))
            }
            Kind::Number { min, max } => {
                let x: f64 = typed
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite())
                    .ok_or_else(|| format!("{typed:?} is not a number"))?;
                check_range(x, *min, *max)?;
                Ok(typed
                    .parse::<i64>()
                    .map(Value::from)
                    .unwrap_or(Value::from(x)))
            }
            Kind::Boolean => match typed.to_lowercase().as_str() {
                "y" | "yes" | "true" | "1" | "on" => Ok(Value::Bool(true)),
                "n" | "no" | "false" | "0" | "off" => Ok(Value::Bool(false)),
                _ => Err(format!("{typed:?} is not y or n")),
            },
            Kind::One(choices) => pick(choices, typed),
            Kind::Many { choices, min, max } => {
                let mut picked: Vec<Value> = Vec::new();
                for word in typed.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                    let v = if choices.is_empty() {
                        Value::String(word.to_string())
                    } else {
                        pick(choices, word)?
                    };
                    if !picked.contains(&v) {
                        picked.push(v);
                    }
                }
                check_count(picked.len() as u64, *min, *max, "choices")?;
                Ok(Value::Array(picked))
            }
        }
    }
}

/// The choice `word` names: by value, by number, or by title or value in any case.
fn pick(choices: &[Choice], word: &str) -> Result<Value, String> {
    let lower = word.to_lowercase();
    let by_number = word
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| choices.get(i));
    choices
        .iter()
        .find(|c| plain(&c.value) == word)
        .or(by_number)
        .or_else(|| {
            choices.iter().find(|c| {
                plain(&c.value).to_lowercase() == lower
                    || c.title.as_ref().is_some_and(|t| t.to_lowercase() == lower)
            })
        })
        .map(|c| c.value.clone())
        .ok_or_else(|| format!("{word:?} is not one of the choices (a number or a name shown)"))
}

/// A JSON value as plain text (a string without its quotes).
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `format` in words.
fn format_words(format: &str) -> String {
    match format {
        "email" => "an email address".into(),
        "uri" => "a URI such as https://example.com".into(),
        "date" => "a date YYYY-MM-DD".into(),
        "date-time" => "a date and time YYYY-MM-DDTHH:MM".into(),
        other => format!("format {other}"),
    }
}

/// "from 1 to 3 things", "at least 1 thing", … ; `None` without limits.
fn limits(min: Option<u64>, max: Option<u64>, what: &str) -> Option<String> {
    match (min, max) {
        (Some(a), Some(b)) if a == b => Some(format!("{a} {what}")),
        (Some(a), Some(b)) => Some(format!("{a} to {b} {what}")),
        (Some(a), None) => Some(format!("at least {a} {what}")),
        (None, Some(b)) => Some(format!("at most {b} {what}")),
        (None, None) => None,
    }
}

/// "a number from 0 to 10" and the like.
fn with_range(what: &str, min: Option<f64>, max: Option<f64>) -> String {
    match (min, max) {
        (Some(a), Some(b)) => format!("{what} from {a} to {b}"),
        (Some(a), None) => format!("{what}, at least {a}"),
        (None, Some(b)) => format!("{what}, at most {b}"),
        (None, None) => what.to_string(),
    }
}

fn check_range(x: f64, min: Option<f64>, max: Option<f64>) -> Result<(), String> {
    match (min, max) {
        (Some(a), _) if x < a => Err(format!("{x} is less than {a}")),
        (_, Some(b)) if x > b => Err(format!("{x} is more than {b}")),
        _ => Ok(()),
    }
}

fn check_count(n: u64, min: Option<u64>, max: Option<u64>, what: &str) -> Result<(), String> {
    match (min, max) {
        (Some(a), _) if n < a => Err(format!("{n} {what}; at least {a} are needed")),
        (_, Some(b)) if n > b => Err(format!("{n} {what}; at most {b} are allowed")),
        _ => Ok(()),
    }
}

/// Whether `text` looks like the `format` says (cheap checks, not the full grammars).
fn check_format(format: &str, text: &str) -> Result<(), String> {
    let ok = match format {
        "email" => text.split_once('@').is_some_and(|(user, host)| {
            !user.is_empty()
                && host.contains('.')
                && !host.starts_with('.')
                && !host.ends_with('.')
                && !host.contains('@')
                && !text.contains(char::is_whitespace)
        }),
        "uri" => text.split_once(':').is_some_and(|(scheme, rest)| {
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
                && !rest.is_empty()
                && !text.contains(char::is_whitespace)
        }),
        "date" => is_date(text),
        "date-time" => text
            .split_once(['T', 't', ' '])
            .is_some_and(|(d, t)| is_date(d) && is_time(t)),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{text:?} is not {}", format_words(format)))
    }
}

/// `YYYY-MM-DD`, a day that exists.
fn is_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return false;
    };
    let digits = |s: &str, n: usize| s.len() == n && s.chars().all(|c| c.is_ascii_digit());
    if !(digits(y, 4) && digits(m, 2) && digits(d, 2)) {
        return false;
    }
    let (y, m, d): (u32, u32, u32) = match (y.parse(), m.parse(), d.parse()) {
        (Ok(y), Ok(m), Ok(d)) => (y, m, d),
        _ => return false,
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// `HH:MM` at the start (seconds and a zone may follow).
fn is_time(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 5
        && b[2] == b':'
        && text[..2].parse::<u32>().is_ok_and(|h| h < 24)
        && text
            .get(3..5)
            .and_then(|m| m.parse::<u32>().ok())
            .is_some_and(|m| m < 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(prop: Value) -> Field {
        Field::new("f", &prop, false)
    }

    #[test]
    fn choices_are_taken_by_number_value_or_title() {
        let f = field(json!({"type": "string", "oneOf": [
            {"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Batman"}]}));
        assert!(f.question().contains("[pick one: 1 Superman, 2 Batman]"));
        assert_eq!(f.parse("2"), Ok(json!("hero-2")));
        assert_eq!(f.parse("hero-1"), Ok(json!("hero-1")));
        assert_eq!(f.parse("batman"), Ok(json!("hero-2")));
        assert!(f.parse("3").is_err());
        let legacy = field(json!({"type": "string", "enum": ["p1", "p2"],
                                  "enumNames": ["Cats", "Dogs"], "default": "p2"}));
        assert!(legacy
            .question()
            .ends_with("[pick one: 1 Cats, 2 Dogs] default Dogs:"));
        assert_eq!(legacy.parse("cats"), Ok(json!("p1")));
    }

    #[test]
    fn a_multi_select_is_an_array_within_its_counts() {
        let f = field(json!({"type": "array", "minItems": 1, "maxItems": 2,
            "items": {"anyOf": [{"const": "a", "title": "Ay"}, {"const": "b", "title": "Bee"},
                                {"const": "c", "title": "Cee"}]}}));
        assert!(f
            .question()
            .contains("[pick 1 to 2, separated by commas: 1 Ay, 2 Bee, 3 Cee]"));
        assert_eq!(f.parse("1, bee"), Ok(json!(["a", "b"])));
        assert!(f.parse("a,b,c").is_err());
        let plain =
            field(json!({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}));
        assert_eq!(plain.parse("a,b"), Ok(json!(["a", "b"])));
        assert!(plain.parse("a,z").is_err());
    }

    #[test]
    fn numbers_and_booleans_are_checked() {
        let i = field(json!({"type": "integer", "minimum": 1, "maximum": 100}));
        assert_eq!(i.parse("7"), Ok(json!(7)));
        assert!(i.parse("0").is_err() && i.parse("7.5").is_err() && i.parse("x").is_err());
        let n = field(json!({"type": "number", "maximum": 10}));
        assert_eq!(n.parse("2.5"), Ok(json!(2.5)));
        assert_eq!(n.parse("3"), Ok(json!(3)));
        assert!(n.parse("11").is_err() && n.parse("NaN").is_err());
        let b = field(json!({"type": "boolean"}));
        assert_eq!(b.parse("yes"), Ok(json!(true)));
        assert_eq!(b.parse("N"), Ok(json!(false)));
        assert!(b.parse("maybe").is_err());
    }

    #[test]
    fn text_lengths_and_formats_are_checked() {
        let t = field(json!({"type": "string", "minLength": 2, "maxLength": 3}));
        assert!(t.parse("a").is_err() && t.parse("abcd").is_err());
        assert_eq!(t.parse("äbc"), Ok(json!("äbc")));
        let check = |format: &str, text: &str| check_format(format, text).is_ok();
        assert!(check("email", "a@b.io") && !check("email", "a@b") && !check("email", "@b.io"));
        assert!(check("uri", "https://x.org") && !check("uri", "x.org"));
        assert!(check("date", "2024-02-29") && !check("date", "2023-02-29"));
        assert!(!check("date", "2024-2-1") && !check("date", "2024-13-01"));
        assert!(check("date-time", "2024-01-02T10:30:00Z") && !check("date-time", "2024-01-02"));
    }

    #[test]
    fn fields_come_in_the_servers_order_then_the_rest() {
        let schema = json!({"properties": {"a": {}, "b": {}, "c": {}}, "required": ["c"]});
        let order = ["c".to_string(), "a".to_string()];
        let names: Vec<(String, bool)> = fields(&schema, &order)
            .into_iter()
            .map(|f| (f.name, f.required))
            .collect();
        assert_eq!(
            names,
            [("c".into(), true), ("a".into(), false), ("b".into(), false)]
        );
    }
}
