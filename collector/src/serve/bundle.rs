//! The browser viewer embedded in the `slotscope` binary at build time.
//!
//! `collector/build.rs` embeds every file of the built viewer (`scripts/build-web` writes it to
//! `web/dist`, or the directory named by `SLOTSCOPE_WEB_DIST` at build time) when the build finds one;
//! a binary built without it has an empty table, and `slotscope serve` then looks for the viewer on
//! disk ([`crate::serve::server`]). The viewer stays its own crate: the binary only carries its files.

use std::path::Path;

/// The table written by `build.rs`: `SOURCE` and `FILES`.
mod generated {
    include!(concat!(env!("OUT_DIR"), "/viewer_bundle.rs"));
}

/// A viewer bundle held in memory: files by their path relative to the bundle (`/`-separated, no
/// leading `/`), sorted by that path.
#[derive(Clone, Copy, Debug)]
pub struct Bundle {
    /// (relative path, bytes), sorted by path, each path once.
    files: &'static [(&'static str, &'static [u8])],
}

impl Bundle {
    /// The bundle embedded at build time, or `None` when the binary was built without the viewer.
    pub fn embedded() -> Option<Bundle> {
        (!generated::FILES.is_empty()).then_some(Bundle {
            files: generated::FILES,
        })
    }

    /// The directory the embedded bundle was taken from at build time, if one was.
    pub fn embedded_source() -> Option<&'static str> {
        generated::SOURCE
    }

    /// A bundle of `files`, which must be sorted by path with each path once (for tests).
    #[cfg(test)]
    pub fn of(files: &'static [(&'static str, &'static [u8])]) -> Bundle {
        assert!(files.windows(2).all(|w| w[0].0 < w[1].0), "sorted, unique");
        Bundle { files }
    }

    /// The index and bytes of the file at `rel`, if the bundle has one.
    pub fn find(&self, rel: &str) -> Option<(usize, &'static [u8])> {
        let i = self.files.binary_search_by(|(p, _)| (*p).cmp(rel)).ok()?;
        Some((i, self.files[i].1))
    }

    /// The path and bytes of file number `i` (as [`Bundle::find`] numbers them).
    pub fn file(&self, i: usize) -> (&'static str, &'static [u8]) {
        self.files[i]
    }

    /// How many files the bundle has.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// The bundle's size in bytes, all files together.
    pub fn bytes(&self) -> usize {
        self.files.iter().map(|(_, b)| b.len()).sum()
    }

    /// Whether the files under `dir` (dotfiles aside) are not exactly this bundle's: a file missing,
    /// added, or with other bytes. Reads the whole directory; an unreadable one differs.
    pub fn differs_from(&self, dir: &Path) -> bool {
        let Ok(on_disk) = crate::serve::bundle_files::files_under(dir) else {
            return true;
        };
        on_disk.len() != self.files.len()
            || on_disk
                .iter()
                .zip(self.files)
                .any(|((rel, file), (path, bytes))| {
                    rel != path || std::fs::read(file).ok().as_deref() != Some(*bytes)
                })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_files_by_path_only() {
        static FILES: &[(&str, &[u8])] = &[
            ("demo/a.jsonl.zst", b"z"),
            ("index.html", b"<html>"),
            ("whatif/w.js", b"w"),
        ];
        let b = Bundle::of(FILES);
        assert_eq!(b.find("index.html"), Some((1, &b"<html>"[..])));
        assert_eq!(b.find("demo/a.jsonl.zst").map(|f| f.0), Some(0));
        assert_eq!(b.file(2), ("whatif/w.js", &b"w"[..]));
        for absent in [
            "",
            "/index.html",
            "demo",
            "demo/",
            "INDEX.HTML",
            "../index.html",
        ] {
            assert_eq!(b.find(absent), None, "{absent}");
        }
        assert_eq!((b.len(), b.bytes()), (3, 8));
    }

    #[test]
    fn differs_from_any_other_directory_content() {
        static FILES: &[(&str, &[u8])] = &[("demo/a.zst", b"z"), ("index.html", b"<html>")];
        let b = Bundle::of(FILES);
        let dir = std::env::temp_dir().join(format!("slotscope-bundle-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("demo")).unwrap();
        std::fs::write(dir.join("index.html"), "<html>").unwrap();
        std::fs::write(dir.join("demo/a.zst"), "z").unwrap();
        std::fs::write(dir.join(".stamp"), "dotfiles are not part of it").unwrap();
        assert!(!b.differs_from(&dir));
        std::fs::write(dir.join("demo/a.zst"), "y").unwrap();
        assert!(b.differs_from(&dir), "other bytes");
        std::fs::write(dir.join("demo/a.zst"), "z").unwrap();
        std::fs::write(dir.join("extra.js"), "").unwrap();
        assert!(b.differs_from(&dir), "a file added");
        std::fs::remove_file(dir.join("extra.js")).unwrap();
        std::fs::remove_file(dir.join("index.html")).unwrap();
        assert!(b.differs_from(&dir), "a file missing");
        assert!(b.differs_from(&dir.join("nowhere")));
        let _ = std::fs::remove_dir_all(dir);
    }

    /// The embedded table, when the build had a bundle: sorted, and byte for byte the directory it was
    /// embedded from (which `cargo` re-embeds whenever it changes).
    #[test]
    fn the_embedded_bundle_is_the_built_viewer() {
        let (Some(b), Some(source)) = (Bundle::embedded(), Bundle::embedded_source()) else {
            println!("skipped: this build has no embedded viewer (no web/dist at build time)");
            assert!(Bundle::embedded_source().is_none() && Bundle::embedded().is_none());
            return;
        };
        assert!(generated::FILES.windows(2).all(|w| w[0].0 < w[1].0));
        for rel in ["index.html", "slotscope_web.js", "slotscope_web_bg.wasm"] {
            let (_, bytes) = b
                .find(rel)
                .unwrap_or_else(|| panic!("{rel} is not embedded"));
            assert_eq!(
                bytes,
                std::fs::read(Path::new(source).join(rel)).unwrap(),
                "{rel}"
            );
        }
        assert_eq!(&b.find("slotscope_web_bg.wasm").unwrap().1[..4], b"\0asm");
        assert!(
            generated::FILES
                .iter()
                .any(|(p, _)| p.starts_with("demo/") && p.ends_with(".jsonl.zst")),
            "the demo recordings are embedded"
        );
        assert!(!b.differs_from(Path::new(source)));
    }
}
