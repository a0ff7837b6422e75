//! The crate's layering, as CONTRIBUTING.md's "Layout" table states it, checked against the code:
//! every `crate::<module>` path in `src/` (outside comments; `use crate::{..}` trees and the
//! root's re-exports such as `crate::Client` included) must point to a module
//! on the same floor or below, no two modules may use each other (directly or round a circle),
//! and every module must have a floor. A new module, or a new `use` that runs upwards, fails
//! here until the table (and so CONTRIBUTING.md) says where it belongs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The file whose "## Layout" table the crate is checked against.
const LAYOUT_DOC: &str = "CONTRIBUTING.md";

/// The floors of CONTRIBUTING.md's "Layout" table: module -> floor.
fn floors() -> BTreeMap<String, u32> {
    let doc = std::fs::read_to_string(root().join(LAYOUT_DOC)).expect("read CONTRIBUTING.md");
    let layout = doc
        .split("\n## Layout\n")
        .nth(1)
        .expect("CONTRIBUTING.md has a `## Layout` section");
    let layout = layout.split("\n## ").next().unwrap_or(layout);
    let mut floors = BTreeMap::new();
    for line in layout.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | floor | modules | what |
        let (Some(floor), Some(modules)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let Ok(floor) = floor.parse::<u32>() else {
            continue;
        };
        for module in modules.split('`').skip(1).step_by(2) {
            let previous = floors.insert(module.to_owned(), floor);
            assert!(
                previous.is_none(),
                "`{module}` has two floors in CONTRIBUTING.md's layout"
            );
        }
    }
    assert!(
        !floors.is_empty(),
        "no floor table in CONTRIBUTING.md's `## Layout` section"
    );
    floors
}

/// The crate's modules (first path segment under `src/`, `lib` for the root), without the CLI.
fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "bin") {
                continue;
            }
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(path: &Path) -> String {
    let rel = path.strip_prefix(root().join("src")).expect("under src/");
    let first = rel
        .components()
        .next()
        .expect("a path")
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_owned()
}

/// A file's code without its comments (`//` to the end of a line; doc comments too).
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a `use crate::{...}` tree names, from the text after `crate::{`: the first segment
/// of each top-level item (`a`, `b` in `{a, b::{C, D}}`).
fn tree_heads(after_brace: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item = String::new();
    for c in after_brace.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                heads.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        if depth == 0 {
            item.push(c);
        }
    }
    heads.push(item);
    heads
        .iter()
        .map(|h| {
            h.trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|h| !h.is_empty())
        .collect()
}

/// The crate root's re-exports: item name -> the module it comes from (`pub use
/// crate::config::{Config, ...};` gives `Config` -> `config`), so that `crate::Config` counts as
/// a use of `config`.
fn reexports() -> BTreeMap<String, String> {
    let code = code_of(&std::fs::read_to_string(root().join("src/lib.rs")).expect("read src/lib.rs"));
    let mut out = BTreeMap::new();
    for stmt in code.split(';') {
        let Some(at) = stmt.find("pub use crate::") else {
            continue;
        };
        let path = stmt[at + "pub use crate::".len()..].trim();
        let module: String = path
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        let names: Vec<String> = match path.find('{') {
            Some(b) => path[b + 1..]
                .trim_end_matches('}')
                .split(',')
                .filter_map(|n| n.split("::").last().map(|n| n.trim().to_owned()))
                .filter(|n| !n.is_empty())
                .collect(),
            None => path
                .rsplit("::")
                .next()
                .map(|n| vec![n.trim().to_owned()])
                .unwrap_or_default(),
        };
        for n in names {
            let n = n.split(" as ").last().unwrap_or(&n).trim().to_owned();
            out.insert(n, module.clone());
        }
    }
    out
}

/// module -> the modules its code names with `crate::`: paths (`crate::conn::Connection`),
/// `use crate::{a, b::C}` trees, and the root's re-exports (`crate::Client` is `client`'s).
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    source_files(&root().join("src"), &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(f)).collect();
    let reexported = reexports();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = module_of(file);
        edges.entry(from.clone()).or_default();
        let code = code_of(&std::fs::read_to_string(file).expect("read a source file"));
        let mut named: Vec<String> = Vec::new();
        for (i, _) in code.match_indices("crate::") {
            // not `redisson_lock::crate`-like words: `crate::` must start a path
            if code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &code[i + "crate::".len()..];
            if let Some(tree) = rest.strip_prefix('{') {
                named.extend(tree_heads(tree));
            } else {
                named.push(
                    rest.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect(),
                );
            }
        }
        for name in named {
            let module = if modules.contains(&name) {
                Some(name)
            } else {
                reexported.get(&name).cloned()
            };
            if let Some(m) = module.filter(|m| *m != from) {
                edges.entry(from.clone()).or_default().insert(m);
            }
        }
    }
    edges
}

/// What is wrong with `edges` against `floors`.
fn check(floors: &BTreeMap<String, u32>, edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut problems = Vec::new();
    for module in edges.keys() {
        if !floors.contains_key(module) {
            problems.push(format!(
                "`{module}` has no floor in CONTRIBUTING.md's layout table"
            ));
        }
    }
    for module in floors.keys() {
        if !edges.contains_key(module) {
            problems.push(format!(
                "CONTRIBUTING.md's layout names `{module}`, which is not a module of src/"
            ));
        }
    }
    for (from, tos) in edges {
        for to in tos {
            if let (Some(f), Some(t)) = (floors.get(from), floors.get(to)) {
                if t > f {
                    problems.push(format!("`{from}` (floor {f}) uses `{to}` (floor {t}): upwards"));
                }
            }
        }
    }
    // circles: a depth-first walk that meets a module on its own path
    fn walk<'a>(
        m: &'a str,
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
        circles: &mut Vec<String>,
    ) {
        if let Some(at) = path.iter().position(|p| *p == m) {
            circles.push(format!("circle: {} -> {m}", path[at..].join(" -> ")));
            return;
        }
        if !done.insert(m) {
            return;
        }
        path.push(m);
        for next in edges.get(m).into_iter().flatten() {
            walk(next, edges, path, done, circles);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        walk(m, edges, &mut Vec::new(), &mut done, &mut problems);
    }
    problems
}

#[test]
fn every_module_uses_only_its_floor_and_below_and_no_module_uses_itself_round_a_circle() {
    let problems = check(&floors(), &edges());
    assert!(problems.is_empty(), "layering:\n{}", problems.join("\n"));
}

/// The checker finds an upward use, a circle, a module without a floor and a floor without a
/// module in a made-up crate.
#[test]
fn the_checker_finds_what_is_wrong() {
    let floors: BTreeMap<String, u32> = [("a", 1), ("b", 2), ("c", 2), ("gone", 1)]
        .into_iter()
        .map(|(m, f)| (m.to_owned(), f))
        .collect();
    let edge = |pairs: &[(&str, &str)]| {
        let mut e: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for m in ["a", "b", "c", "new"] {
            e.entry(m.to_owned()).or_default();
        }
        for (from, to) in pairs {
            e.entry((*from).to_owned()).or_default().insert((*to).to_owned());
        }
        e
    };
    let problems = check(&floors, &edge(&[("a", "b"), ("b", "c"), ("c", "b")]));
    let all = problems.join("\n");
    assert!(all.contains("`a` (floor 1) uses `b` (floor 2): upwards"), "{all}");
    assert!(all.contains("circle: b -> c -> b"), "{all}");
    assert!(all.contains("`new` has no floor"), "{all}");
    assert!(all.contains("names `gone`"), "{all}");
    // the crate's own scan finds its `crate::` paths, use trees and re-exports
    assert!(edges().get("core").is_some_and(|tos| tos.contains("kind")));
    assert_eq!(tree_heads("a, b::{C, D}, c::E as F};"), ["a", "b", "c"]);
    let re = reexports();
    assert_eq!(re.get("Client").map(String::as_str), Some("client"));
    assert_eq!(re.get("MAX_DURATION").map(String::as_str), Some("config"));
}
