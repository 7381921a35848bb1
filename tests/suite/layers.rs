//! The layers of `src/` (issue 33): every top-level module belongs to one layer, a module
//! imports (`crate::X`) only from its own layer or a lower one, and no two modules import
//! each other, directly or round a circle. Read from the source, test code left out (a file
//! named `tests.rs`, a `tests/` folder, everything after a file's `#[cfg(test)]`). The
//! upward imports and cycles of today are listed in [`ALLOWED`]: the list may only shrink
//! (an entry that no longer occurs fails too, so a fixed one is taken off). Inside a module
//! folder, sibling files form no cycle but the ones [`SIBLING_CYCLES`] names, with why.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first, and the top-level modules of each.
const LAYERS: &[(&str, &[&str])] = &[
    ("platform", &["platform"]),
    ("vocabulary", &["vocab"]),
    ("configuration", &["config"]),
    ("capabilities", &["hooks", "tools", "commands", "providers"]),
    ("agent", &["agent"]),
    ("hosts", &["extensions", "mcp"]),
    ("wiring", &["app"]),
    ("front ends", &["repl"]),
];

/// Imports that break the rule today, `(from, to)`: each is to be taken away, none added.
const ALLOWED: &[(&str, &str)] = &[];

/// The cycles between sibling files (or folders) inside one module that remain, each with
/// why: no other may appear, and these may not grow.
///
/// - `extensions`: an extension's link (`api`) reaches the shared host context
///   (`services`), which holds the background registry (`background`: events, timers,
///   watches) that calls back into the extensions' workers (`worker`), which own the links.
///   It is ownership going round (held by `Arc` one way and `Weak` the other); cutting it
///   would put a trait object on every background call for no reader's gain.
/// - `mcp`: the manager installs each server's tools in the registry (`registry`), and
///   those tools call the manager back (a `Weak`) when the model calls them.
const SIBLING_CYCLES: &[(&str, &[&str])] = &[
    ("extensions", &["api", "background", "services", "worker"]),
    ("mcp", &["manager", "registry"]),
];

/// `(from module, to module)` -> the first `file:line` that imports it.
type Edges = BTreeMap<(String, String), String>;

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if name != "tests" {
                source_files(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" && name != "testutil.rs" {
            out.push(path);
        }
    }
}

/// The names after `crate::` on a line: `crate::x::y` gives `x`, `crate::{x, y::z}` gives
/// both.
fn imported(line: &str) -> Vec<String> {
    names_after(line, "crate::")
}

/// The names after `prefix` (a path ending in `::`) on a line, as [`imported`] reads them.
fn names_after(line: &str, prefix: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().last();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let ident = |s: &str| -> String {
            s.trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        };
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in group[..end].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        found.push(ident(&group[start..i]));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            found.push(ident(&group[start..end]));
        } else {
            found.push(ident(rest));
        }
    }
    found.retain(|n| !n.is_empty());
    found
}

fn edges(src: &Path) -> (Edges, BTreeSet<String>) {
    let mut files = Vec::new();
    source_files(src, &mut files);
    let mut edges = Edges::new();
    let mut modules = BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let top = top.trim_end_matches(".rs").to_string();
        if top == "main" || top == "lib" {
            continue;
        }
        modules.insert(top.clone());
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        // Doc links count too: a lower layer's docs that link up name what it should not
        // know.
        for (n, line) in code.lines().enumerate() {
            for to in imported(line) {
                if to != top {
                    let at = format!("src/{}:{}", rel.display(), n + 1);
                    edges.entry((top.clone(), to)).or_insert(at);
                }
            }
        }
    }
    // Only edges to modules of ours (`crate::VERSION` and the like are not modules).
    edges.retain(|(_, to), _| modules.contains(to));
    (edges, modules)
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, mods)| mods.contains(&module))
}

/// A cycle of `graph`, if it has one (the modules round it, the first repeated at the end).
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let from = path.iter().position(|p| p == next).unwrap();
                    let mut cycle = path[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(next, graph, state, path) {
                        return Some(c);
                    }
                }
            }
        }
        path.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if !state.contains_key(node) {
            if let Some(c) = visit(node, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn modules_import_only_from_their_layer_or_below_and_form_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (edges, modules) = edges(&src);
    let mut problems = Vec::new();
    for m in &modules {
        if layer_of(m).is_none() {
            problems.push(format!(
                "src/{m}: a top-level module in no layer; add it to LAYERS in this test and \
                 to the Layout in src/lib.rs"
            ));
        }
    }
    let allowed = |from: &str, to: &str| ALLOWED.contains(&(from, to));
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for ((from, to), at) in &edges {
        if allowed(from, to) {
            continue;
        }
        if let (Some(a), Some(b)) = (layer_of(from), layer_of(to)) {
            if a < b {
                problems.push(format!(
                    "{at}: {from} ({}) imports {to} ({}), a higher layer",
                    LAYERS[a].0, LAYERS[b].0
                ));
            }
        }
        graph.entry(from.clone()).or_default().insert(to.clone());
    }
    if let Some(cycle) = find_cycle(&graph) {
        let at: Vec<String> = cycle
            .windows(2)
            .map(|w| edges[&(w[0].clone(), w[1].clone())].clone())
            .collect();
        problems.push(format!(
            "a cycle: {} (at {})",
            cycle.join(" -> "),
            at.join(", ")
        ));
    }
    for (from, to) in ALLOWED {
        if !edges.contains_key(&(from.to_string(), to.to_string())) {
            problems.push(format!(
                "{from} no longer imports {to}: take ({from:?}, {to:?}) off ALLOWED"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Inside module folder `dir` (`src/NAME`): sibling -> siblings it imports, each edge with
/// the first `file:line`.
fn sibling_edges(src: &Path, module: &str) -> BTreeMap<(String, String), String> {
    let dir = src.join(module);
    let mut files = Vec::new();
    source_files(&dir, &mut files);
    let mut siblings = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if name != "mod.rs" && name != "tests" && name != "tests.rs" {
            siblings.insert(name.trim_end_matches(".rs").to_string());
        }
    }
    let mut edges = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(&dir).unwrap();
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().to_string())
            .collect();
        if parts == ["mod.rs"] {
            continue;
        }
        let me = parts[0].trim_end_matches(".rs").to_string();
        // What `super::` names from this file: the module's siblings (a file right under the
        // folder, or a sibling folder's mod.rs), or from one level deeper `super::super::`.
        let up = match parts.len() {
            1 => Some("super::"),
            2 if parts[1] == "mod.rs" => Some("super::"),
            2 => Some("super::super::"),
            _ => None,
        };
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            let mut names = names_after(line, &format!("crate::{module}::"));
            if let Some(up) = up {
                names.extend(names_after(line, up));
            }
            for to in names {
                if to != me && siblings.contains(&to) {
                    let at = format!("src/{module}/{}:{}", rel.display(), n + 1);
                    edges.entry((me.clone(), to)).or_insert(at);
                }
            }
        }
    }
    edges
}

/// The strongly connected groups of more than one node.
fn cycles_of(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for next in graph.get(&n).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|k| (k, reach(k))).collect();
    let mut groups: Vec<BTreeSet<String>> = Vec::new();
    for (node, from_node) in &reached {
        let group: BTreeSet<String> = from_node
            .iter()
            .filter(|other| reached.get(other).is_some_and(|r| r.contains(*node)))
            .cloned()
            .collect();
        if group.len() > 1 && !groups.contains(&group) {
            groups.push(group);
        }
    }
    groups
}

#[test]
fn sibling_files_form_no_cycle_but_the_known_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut problems = Vec::new();
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let module = path.file_name().unwrap().to_string_lossy().to_string();
        let edges = sibling_edges(&src, &module);
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges.keys() {
            graph.entry(from.clone()).or_default().insert(to.clone());
        }
        for group in cycles_of(&graph) {
            let known = SIBLING_CYCLES.iter().any(|(m, files)| {
                *m == module && files.iter().copied().eq(group.iter().map(String::as_str))
            });
            if known {
                seen.push(module.clone());
                continue;
            }
            let at: Vec<&String> = edges
                .iter()
                .filter(|((a, b), _)| group.contains(a) && group.contains(b))
                .map(|(_, at)| at)
                .collect();
            problems.push(format!(
                "src/{module}: the files {group:?} import each other round a circle (at {}); \
                 move what they share into a file of its own",
                at.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    for (module, files) in SIBLING_CYCLES {
        if !seen.iter().any(|m| m == module) {
            problems.push(format!(
                "src/{module}: the cycle {files:?} is gone; take it off SIBLING_CYCLES"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The files that may use `unsafe`: the platform layer (and the allocator's crate,
/// `crates/alloc`), and the Lua raw API (`crates/crossing/src/lua/`).
const UNSAFE_FILES: &[&str] = &[
    "crates/alloc/src/lib.rs",
    "crates/crossing/src/lua/",
    "src/platform/",
];

#[test]
fn unsafe_code_stays_in_the_platform_and_the_lua_raw_api() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    source_files(&root.join("src"), &mut files);
    source_files(&root.join("crates"), &mut files);
    let mut problems = Vec::new();
    for file in files {
        let rel = file.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        let allowed = UNSAFE_FILES.iter().any(|p| rel.starts_with(p));
        if text.contains("allow(unsafe_code)") && !allowed {
            problems.push(format!(
                "{rel} allows unsafe code: put the system call behind a safe function in \
                 src/platform/sys.rs (or use nix)"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn imports_are_read_from_paths_and_groups() {
    assert_eq!(imported("use crate::vocab::text::inert;"), ["vocab"]);
    assert_eq!(
        imported("use crate::{agent::Agent, hooks, run::{A, B}};"),
        ["agent", "hooks", "run"]
    );
    assert_eq!(
        imported("x = my_crate::foo; y = crate::tools::X"),
        ["tools"]
    );
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(
        find_cycle(&g),
        Some(vec!["a".into(), "b".into(), "a".into()])
    );
    assert_eq!(cycles_of(&g), [BTreeSet::from(["a".into(), "b".into()])]);
    g.remove("b");
    assert_eq!(find_cycle(&g), None);
    assert!(cycles_of(&g).is_empty());
    assert_eq!(
        names_after("use super::{a, b::C}; super::super::d()", "super::"),
        ["a", "b", "super", "d"]
    );
}
