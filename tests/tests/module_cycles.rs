//! No import circles between modules: in every crate of the workspace (`crates/core`, `collector`,
//! `web`, `web/reader`, `web/whatif`, `tests`), the modules below one parent import each other in
//! one direction only.
//!
//! The check reads the sources as text. Each file is a module (`a/b.rs` and `a/b/mod.rs` are
//! `a::b`); its non-test code's paths (`use` trees and inline `crate::…`, `super::…`, `self::…`
//! paths, and `use child::…` of a module it declares) are resolved to the module that defines the
//! item, through the parents' `pub use` re-exports. An edge from `a::x::…` to `a::y::…` is an edge
//! `x → y` between the two children of their deepest common parent `a`; a module using its own
//! ancestor or descendant is the tree itself, not an edge. A strongly connected set of two or more
//! siblings is a circle, reported with the files and lines that make its edges.
//!
//! Test code (`#[cfg(test)]` items and modules) is left out: a test may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path below its crate's root (`["replay", "client"]`; the root is empty).
type ModPath = Vec<String>;

/// One crate's modules: their sources (test code removed) and what each re-exports.
struct Crate {
    name: String,
    modules: BTreeMap<ModPath, Module>,
}

struct Module {
    file: PathBuf,
    /// Non-test source lines, numbered from 1 as in the file.
    lines: Vec<(usize, String)>,
    /// Names re-exported by `pub use` (`name → path as written`), resolved later.
    reexports: BTreeMap<String, Vec<String>>,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

/// The `.rs` files under `src`, as module paths.
fn module_files(src: &Path) -> Vec<(ModPath, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable source folder") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("under src");
            let mut parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            let last = parts.pop().expect("a file name");
            let stem = last.trim_end_matches(".rs");
            if !matches!(stem, "mod" | "lib" | "main") || !parts.is_empty() && stem != "mod" {
                parts.push(stem.to_owned());
            }
            // `src/bin/x.rs` is a crate of its own.
            if parts.first().is_some_and(|p| p == "bin") {
                continue;
            }
            out.push((parts, path));
        }
    }
    out
}

/// The file's lines without test code: an item after `#[cfg(test)]` is skipped to its end (its
/// braces balanced, or its `;`).
fn non_test_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") || t.starts_with("#[cfg(all(test") {
            let mut depth = 0i32;
            let mut opened = false;
            for (_, l) in lines.by_ref() {
                let code = l.split("//").next().unwrap_or("");
                for c in code.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                if (opened && depth <= 0) || (!opened && code.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push((i + 1, line.split(" //").next().unwrap_or("").to_owned()));
    }
    out
}

/// Every `use` statement of the lines, as (line, text without `use` and `;`, is `pub`).
fn use_statements(lines: &[(usize, String)]) -> Vec<(usize, String, bool)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String, bool)> = None;
    for (n, line) in lines {
        let t = line.trim();
        if let Some(open) = current.as_mut() {
            open.1.push_str(t);
        } else {
            let (rest, public) = if let Some(r) = t.strip_prefix("pub use ") {
                (r, true)
            } else if let Some(r) = t
                .strip_prefix("pub(crate) use ")
                .or_else(|| t.strip_prefix("pub(super) use "))
            {
                (r, true)
            } else if let Some(r) = t.strip_prefix("use ") {
                (r, false)
            } else {
                continue;
            };
            current = Some((*n, rest.to_owned(), public));
        }
        if current.as_ref().is_some_and(|c| c.1.contains(';')) {
            let (n, mut s, p) = current.take().expect("open");
            s.truncate(s.find(';').expect("checked"));
            out.push((n, s, p));
        }
    }
    out
}

/// A use tree expanded into its paths (`a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`); each
/// with the name it binds (`as` renames kept as the name).
fn expand_tree(tree: &str) -> Vec<(Vec<String>, String)> {
    fn split_top(s: &str) -> Vec<&str> {
        let mut parts = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in s.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&s[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&s[start..]);
        parts
            .into_iter()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect()
    }
    let tree: String = tree
        .chars()
        .filter(|c| !c.is_whitespace() || *c == ' ')
        .collect();
    let tree = tree.trim();
    let mut out = Vec::new();
    if let Some(open) = tree.find('{') {
        let prefix: Vec<String> = tree[..open]
            .trim_end_matches("::")
            .split("::")
            .filter(|s| !s.is_empty())
            .map(|s| s.trim().to_owned())
            .collect();
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        for part in split_top(inner) {
            for (mut path, name) in expand_tree(part) {
                let mut full = prefix.clone();
                if path == ["self"] {
                    let name = full.last().cloned().unwrap_or_default();
                    out.push((full, name));
                    continue;
                }
                full.append(&mut path);
                out.push((full, name));
            }
        }
    } else {
        let (path, alias) = match tree.split_once(" as ") {
            Some((p, a)) => (p.trim(), Some(a.trim())),
            None => (tree, None),
        };
        let segs: Vec<String> = path.split("::").map(|s| s.trim().to_owned()).collect();
        let name = alias
            .map(str::to_owned)
            .unwrap_or_else(|| segs.last().cloned().unwrap_or_default());
        out.push((segs, name));
    }
    out
}

/// Inline paths starting with `crate::`, `super::` or `self::` in a line (outside `use`).
fn inline_paths(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(pos) = line[from..].find(start) {
            let at = from + pos;
            from = at + start.len();
            if at > 0
                && (bytes[at - 1].is_ascii_alphanumeric()
                    || bytes[at - 1] == b'_'
                    || bytes[at - 1] == b':')
            {
                continue;
            }
            let rest = &line[at..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let segs: Vec<String> = rest[..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            out.push(segs);
        }
    }
    out
}

impl Crate {
    fn read(name: &str, src: &Path) -> Crate {
        let mut modules = BTreeMap::new();
        for (path, file) in module_files(src) {
            let text = std::fs::read_to_string(&file).expect("readable source");
            let lines = non_test_lines(&text);
            let mut reexports = BTreeMap::new();
            for (_, tree, public) in use_statements(&lines) {
                if public {
                    for (segs, bound) in expand_tree(&tree) {
                        if bound != "*" {
                            reexports.insert(bound, segs);
                        }
                    }
                }
            }
            modules.insert(
                path,
                Module {
                    file,
                    lines,
                    reexports,
                },
            );
        }
        Crate {
            name: name.to_owned(),
            modules,
        }
    }

    /// `segs` as written in module `at` made absolute (`crate`, `super`, `self`, or a child of
    /// `at`); `None` for another crate's path.
    fn absolute(&self, at: &ModPath, segs: &[String]) -> Option<Vec<String>> {
        let mut base: Vec<String>;
        let mut rest = segs;
        match segs.first().map(String::as_str) {
            Some("crate") => {
                base = Vec::new();
                rest = &segs[1..];
            }
            Some("self") => {
                base = at.clone();
                rest = &segs[1..];
            }
            Some("super") => {
                base = at.clone();
                while rest.first().map(String::as_str) == Some("super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                let mut child = at.clone();
                child.push(first.to_owned());
                if !self.modules.contains_key(&child) {
                    return None;
                }
                base = at.clone();
            }
            None => return None,
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The module defining what the absolute path names: its longest module prefix, followed
    /// through that module's re-exports (a few steps at most).
    fn defining_module(&self, abs: &[String], depth: usize) -> Option<ModPath> {
        let mut len = abs.len();
        while len > 0 && !self.modules.contains_key(&abs[..len]) {
            len -= 1;
        }
        let module: ModPath = abs[..len].to_vec();
        if !self.modules.contains_key(&module) {
            return None;
        }
        if depth < 8 {
            if let Some(item) = abs.get(len) {
                if let Some(target) = self.modules[&module].reexports.get(item) {
                    if let Some(a) = self.absolute(&module, target) {
                        if a != abs {
                            if let Some(m) = self.defining_module(&a, depth + 1) {
                                return Some(m);
                            }
                        }
                    }
                }
            }
        }
        Some(module)
    }

    /// The sibling edges (parent, from child, to child) with the line that makes each.
    fn edges(&self) -> BTreeMap<(ModPath, String, String), String> {
        let mut out = BTreeMap::new();
        for (at, m) in &self.modules {
            let mut paths: Vec<(usize, Vec<String>)> = Vec::new();
            for (n, tree, _) in use_statements(&m.lines) {
                for (segs, _) in expand_tree(&tree) {
                    paths.push((n, segs));
                }
            }
            for (n, line) in &m.lines {
                let t = line.trim_start();
                if t.starts_with("use ")
                    || t.starts_with("pub use ")
                    || t.starts_with("pub(crate) use ")
                {
                    continue;
                }
                for segs in inline_paths(line) {
                    paths.push((*n, segs));
                }
            }
            for (n, segs) in paths {
                let Some(abs) = self.absolute(at, &segs) else {
                    continue;
                };
                let Some(target) = self.defining_module(&abs, 0) else {
                    continue;
                };
                let common = at.iter().zip(&target).take_while(|(a, b)| a == b).count();
                if common == at.len() || common == target.len() {
                    continue; // an ancestor or a descendant: the tree itself
                }
                let key = (
                    at[..common].to_vec(),
                    at[common].clone(),
                    target[common].clone(),
                );
                out.entry(key).or_insert_with(|| {
                    format!(
                        "{}:{n} uses {}",
                        m.file
                            .strip_prefix(workspace_root())
                            .unwrap_or(&m.file)
                            .display(),
                        segs.join("::")
                    )
                });
            }
        }
        out
    }

    /// Every circle: sets of two or more siblings that reach each other, with their edges.
    fn circles(&self) -> Vec<String> {
        let edges = self.edges();
        let mut by_parent: BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
        for (parent, from, to) in edges.keys() {
            by_parent
                .entry(parent.clone())
                .or_default()
                .entry(from.clone())
                .or_default()
                .insert(to.clone());
        }
        let mut out = Vec::new();
        for (parent, graph) in &by_parent {
            let reach = |from: &String| -> BTreeSet<String> {
                let mut seen = BTreeSet::new();
                let mut stack = vec![from.clone()];
                while let Some(n) = stack.pop() {
                    for next in graph.get(&n).into_iter().flatten() {
                        if seen.insert(next.clone()) {
                            stack.push(next.clone());
                        }
                    }
                }
                seen
            };
            let mut done = BTreeSet::new();
            for node in graph.keys() {
                if done.contains(node) {
                    continue;
                }
                let from_node = reach(node);
                if !from_node.contains(node) {
                    continue;
                }
                let scc: BTreeSet<String> = from_node
                    .iter()
                    .filter(|other| reach(other).contains(node))
                    .cloned()
                    .collect();
                done.extend(scc.iter().cloned());
                let prefix = if parent.is_empty() {
                    format!("{}::", self.name)
                } else {
                    format!("{}::{}::", self.name, parent.join("::"))
                };
                let mut text = format!(
                    "{prefix}{{{}}}:",
                    scc.iter().cloned().collect::<Vec<_>>().join(", ")
                );
                for ((p, from, to), why) in &edges {
                    if p == parent && scc.contains(from) && scc.contains(to) {
                        text.push_str(&format!("\n    {from} → {to}: {why}"));
                    }
                }
                out.push(text);
            }
        }
        out
    }
}

/// The workspace's crates: name and `src` folder.
fn crates() -> Vec<(&'static str, PathBuf)> {
    let root = workspace_root();
    [
        ("slotscope_core", "crates/core/src"),
        ("slotscope", "collector/src"),
        ("slotscope_web", "web/src"),
        ("slotscope_reader", "web/reader/src"),
        ("slotscope_whatif", "web/whatif/src"),
        ("slotscope_tests", "tests/src"),
    ]
    .into_iter()
    .map(|(n, p)| (n, root.join(p)))
    .collect()
}

#[test]
fn no_module_imports_back_from_a_module_it_is_imported_by() {
    let mut circles = Vec::new();
    for (name, src) in crates() {
        assert!(src.is_dir(), "{} is not a folder", src.display());
        circles.extend(Crate::read(name, &src).circles());
    }
    assert!(
        circles.is_empty(),
        "{} import circle(s):\n{}",
        circles.len(),
        circles.join("\n")
    );
}

#[test]
fn the_check_finds_a_circle_between_siblings_and_ignores_the_tree() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let src = dir.path();
    std::fs::create_dir(src.join("a")).expect("a folder");
    let write = |p: &str, t: &str| std::fs::write(src.join(p), t).expect("written");
    write("lib.rs", "mod a;\nmod b;\npub use a::Thing;\n");
    write(
        "a.rs",
        "mod x;\nmod y;\npub use x::Thing;\nuse super::b::Other;\n",
    );
    write("a/x.rs", "use super::y::Why;\npub struct Thing;\n");
    write(
        "a/y.rs",
        "pub struct Why;\nfn f() { let _ = crate::Thing; }\n",
    );
    write(
        "b.rs",
        "pub struct Other;\n#[cfg(test)]\nmod tests {\n    use crate::a::Thing;\n}\n",
    );
    let circles = Crate::read("demo", src).circles();
    // y → x through the root's and `a`'s re-exports of `x::Thing`; x → y directly. `a` → `b`
    // only: `b`'s test does not count, and `a` using its children is the tree itself.
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert!(circles[0].starts_with("demo::a::{x, y}:"), "{}", circles[0]);
    assert!(circles[0].contains("x → y") && circles[0].contains("y → x"));
}

#[test]
fn the_collectors_domain_code_never_imports_the_command_line() {
    let root = workspace_root();
    let collector = Crate::read("slotscope", &root.join("collector/src"));
    let up: Vec<String> = collector
        .edges()
        .into_iter()
        .filter(|((parent, _, to), _)| parent.is_empty() && to == "cmd")
        .map(|(_, why)| why)
        .collect();
    assert!(
        up.is_empty(),
        "domain code importing cmd/:\n{}",
        up.join("\n")
    );
}
