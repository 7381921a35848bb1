//! Events as tapes: a serializable value as a flat list of tokens the engines build their
//! values from without a `serde_json::Value` in between (`mypi_crossing::tape`, built at
//! opt-level 3). Here: the values the engines' tests check the tape with.

pub(super) use mypi_crossing::tape::{with_tape, Tape};

/// Values with every shape the tape knows, for the engines' tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use serde::Serialize;
    use serde_json::{json, Value};

    #[derive(Serialize)]
    pub enum E {
        Unit,
        New(u8),
        Tuple(i8, String),
        Struct { a: Option<u32>, b: () },
    }

    #[derive(Serialize)]
    pub struct Odd {
        big: u64,
        huge: u64,
        nan: f64,
        whole: f64,
        neg: i64,
        c: char,
        #[serde(serialize_with = "bytes")]
        bytes: Vec<u8>,
        none: Option<String>,
        enums: Vec<E>,
        nested: Vec<Vec<Option<i32>>>,
    }

    fn bytes<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }

    /// A struct of odd numbers, enums, bytes and holes; and JSON with nulls, empty
    /// containers, NUL bytes and deep nesting.
    pub fn odd_values() -> (Odd, Value) {
        let odd = Odd {
            big: i64::MAX as u64,
            huge: u64::MAX,
            nan: f64::NAN,
            whole: 2.0,
            neg: -5,
            c: 'é',
            bytes: vec![0, 255],
            none: None,
            enums: vec![
                E::Unit,
                E::New(7),
                E::Tuple(-1, "t".into()),
                E::Struct { a: None, b: () },
                E::Struct { a: Some(3), b: () },
            ],
            nested: vec![vec![], vec![None, Some(1), None], vec![Some(2)]],
        };
        let values = json!({"s": "a\u{0}b", "e": [], "o": {}, "n": null, "a": [null, [], {}, 1.5],
                            "u": "caf\u{e9} \u{1F600}", "deep": [[[[{"x": [1]}]]]]});
        (odd, values)
    }
}
