//! The Markdown docs as GitHub, crates.io and docs.rs show them (no Redis needed):
//!
//! * no Rust block of README.md, CONTRIBUTING.md or docs/*.md has a hidden `#` line: rustdoc
//!   hides such lines, GitHub and crates.io print them as they are, so a reader would copy
//!   `# async fn demo(..) {`;
//! * the guides that src/guide.rs renders on docs.rs link to each other only through reference
//!   labels defined both at their foot (for GitHub) and in src/guide.rs (for rustdoc), and to no
//!   other relative path (which would lead nowhere on docs.rs).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// README.md, CONTRIBUTING.md and every docs/*.md.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md"), root().join("CONTRIBUTING.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("read docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// Whether rustdoc reads a fenced block with this info string as Rust: no language, `rust`, or
/// only rustdoc's own attributes (`no_run`, `ignore`, ...).
fn is_rust(info: &str) -> bool {
    const RUSTDOC: &[&str] = &[
        "rust",
        "no_run",
        "ignore",
        "should_panic",
        "compile_fail",
        "test_harness",
        "edition2015",
        "edition2018",
        "edition2021",
        "edition2024",
    ];
    let tags: Vec<&str> = info
        .split([',', ' '])
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    tags.iter().all(|t| RUSTDOC.contains(t))
}

/// A line rustdoc hides in a Rust block: `#` alone or followed by a space (`##` escapes it).
fn is_hidden(line: &str) -> bool {
    let t = line.trim_start();
    t == "#" || t.starts_with("# ")
}

/// (line number, line) of every hidden line in a Rust block of `text`.
fn hidden_lines(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut fence: Option<(String, bool)> = None; // (the fence's backticks, is Rust)
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        match &fence {
            None => {
                if let Some(rest) = t.strip_prefix("```") {
                    let ticks = 3 + rest.chars().take_while(|&c| c == '`').count();
                    let info = &t[ticks..];
                    fence = Some(("`".repeat(ticks), is_rust(info)));
                }
            }
            Some((ticks, rust)) => {
                if t.starts_with(ticks.as_str()) && t.trim_end().chars().all(|c| c == '`') {
                    fence = None;
                } else if *rust && is_hidden(line) {
                    found.push((i + 1, line.to_owned()));
                }
            }
        }
    }
    found
}

#[test]
fn no_hidden_lines_in_markdown_rust_blocks() {
    let mut problems = Vec::new();
    for file in markdown_files() {
        for (n, line) in hidden_lines(&read(&file)) {
            problems.push(format!("{}:{n}: {line}", file.display()));
        }
    }
    assert!(
        problems.is_empty(),
        "hidden `#` lines in Markdown Rust blocks (GitHub shows them; write the code out):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_hidden_line_check_sees_them() {
    let md = "text\n```rust,no_run\n# async fn f() {\nlet a = 1;\n# }\n```\n```sh\n# a comment\n```\n```\n  # x\n#[derive(Debug)]\n```\n";
    let lines: Vec<usize> = hidden_lines(md).into_iter().map(|(n, _)| n).collect();
    assert_eq!(lines, [3, 5, 11]);
}

/// The guides src/guide.rs renders: docs/<file>.md.
const GUIDES: &[&str] = &[
    "from-redisson",
    "guarantees",
    "deployment",
    "operations",
    "protocol",
];

/// `[label]: target` definitions in `text`: (label, target).
fn definitions(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix('[')?;
            let (label, target) = rest.split_once("]: ")?;
            Some((label.to_owned(), target.trim().to_owned()))
        })
        .collect()
}

/// Labels of reference links `[text][label]` in `text`.
fn used_labels(text: &str) -> Vec<String> {
    let mut labels = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("][") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(']') {
            let label = &rest[..end];
            if !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                labels.push(label.to_owned());
            }
        }
    }
    labels
}

/// Inline link targets `](target)` outside code.
fn inline_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        // drop `code` spans
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            if let Some(end) = rest.find(')') {
                targets.push(rest[..end].to_owned());
            }
        }
    }
    targets
}

#[test]
fn guides_link_so_that_github_and_docs_rs_both_work() {
    let guide_rs = read(&root().join("src/guide.rs"));
    let for_rustdoc: Vec<String> = guide_rs
        .lines()
        .filter_map(|l| {
            let l = l.trim().trim_start_matches('"');
            let rest = l.strip_prefix('[')?;
            Some(rest.split_once("]: ")?.0.to_owned())
        })
        .collect();
    let mut problems = Vec::new();
    for guide in GUIDES {
        let path = root().join("docs").join(format!("{guide}.md"));
        let text = read(&path);
        assert!(
            guide_rs.contains(&format!("include_str!(\"../docs/{guide}.md\")")),
            "src/guide.rs renders docs/{guide}.md"
        );
        let defined: Vec<String> = definitions(&text).into_iter().map(|(l, _)| l).collect();
        for label in used_labels(&text) {
            if !defined.contains(&label) {
                problems.push(format!("docs/{guide}.md: [{label}] is not defined at its foot"));
            }
            if !for_rustdoc.contains(&label) {
                problems.push(format!(
                    "docs/{guide}.md: [{label}] is not defined in src/guide.rs"
                ));
            }
        }
        for target in inline_targets(&text) {
            if !(target.starts_with('#') || target.starts_with("https://") || target.starts_with("http://")) {
                problems.push(format!(
                    "docs/{guide}.md: link to `{target}` leads nowhere on docs.rs: use a reference \
                     label (another guide) or a GitHub URL (another file)"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
