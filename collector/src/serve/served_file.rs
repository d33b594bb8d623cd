//! What `slotscope serve` knows of one version of a file it serves: its ETag, and its gzip and
//! brotli bodies (see [`Prepared`]). Used by [`crate::serve::server`].

use std::borrow::Cow;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use flate2::write::GzEncoder;
use flate2::Compression;
use hyper::header::HeaderMap;

use crate::serve::request::accepts;

/// Files up to this size get an ETag from their content and, when compressible, a gzip body kept in
/// memory; larger ones (long recordings) get an ETag from their size and modification time and are
/// sent as they are, so that serving them never reads or holds the whole file at once.
const CONTENT_LIMIT: u64 = 64 * 1024 * 1024;

/// Up to this size, gzip at its best level (the viewer's bundle: the ~1 MB wasm takes a fraction
/// of a second once); above it, the default level.
const BEST_LEVEL_LIMIT: usize = 4 * 1024 * 1024;

/// Brotli's quality: its best (11) in a release build, where it takes the viewer's 1.4 MB wasm to
/// about 409 KB (gzip's best: 532 KB); 9 in a debug build (460 KB), which the tests run on every
/// server they start and where level 11 costs about 17 s of a core instead of 1 s.
const BROTLI_QUALITY: i32 = if cfg!(debug_assertions) { 9 } else { 11 };

/// What is known of one version of a served file (one size and modification time).
///
/// The ETag is strong. For a file up to [`CONTENT_LIMIT`] it is a hash of the file's bytes (64-bit
/// FNV-1a) and its length, computed once per version and cached, so a file rewritten with the same
/// bytes keeps its ETag; for a larger file it is its size and modification time in nanoseconds
/// (hashing hundreds of MB on every change would cost more than it saves). The gzip body has its
/// own ETag (the same with `-gz`), as a strong ETag names one representation.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The size it was prepared at.
    pub(crate) len: u64,
    /// The modification time it was prepared at.
    pub(crate) modified: Option<SystemTime>,
    /// The identity body's ETag, quoted.
    pub(crate) etag: String,
    /// The gzip-encoded body, for a compressible file up to [`CONTENT_LIMIT`] that gzip makes
    /// smaller.
    gzip: Option<Arc<Vec<u8>>>,
    /// The brotli-encoded body, for a compressible file up to [`BEST_LEVEL_LIMIT`] (the viewer's
    /// bundle) that it makes smaller than the gzip one. Brotli's best level takes a second or
    /// more on the wasm, so it is computed on a thread of its own ([`Prepared::brotli_later`]);
    /// until it is set, requests get gzip.
    br: OnceLock<Option<Arc<Vec<u8>>>>,
}

impl Prepared {
    /// Reads (if small enough), hashes and compresses the file at `path`, stated as `len` bytes
    /// modified at `modified`; with the bytes read when its brotli body is still to be made
    /// ([`Prepared::brotli_later`]), so that the file is read once.
    pub(crate) fn of(
        path: &Path,
        len: u64,
        modified: Option<SystemTime>,
    ) -> std::io::Result<(Prepared, Option<Vec<u8>>)> {
        if len > CONTENT_LIMIT {
            let nanos = modified
                .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            let prepared = Prepared {
                len,
                modified,
                etag: format!("\"s{len:x}-{nanos:x}\""),
                gzip: None,
                br: OnceLock::from(None),
            };
            return Ok((prepared, None));
        }
        // Should the file change between the metadata and this read, the entry is keyed by the
        // old metadata and is replaced on the next request, which sees the new one.
        let bytes = std::fs::read(path)?;
        let prepared = Prepared::from_bytes(path, &bytes, len, modified)?;
        let wanted = prepared.wants_brotli().then_some(bytes);
        Ok((prepared, wanted))
    }

    /// Hashes and compresses `bytes`, the content of a file named `name` (its extension says whether
    /// to compress), stated as `len` bytes modified at `modified`. The same bytes under the same
    /// name give the same ETag and body, from disk or embedded.
    pub(crate) fn from_bytes(
        name: &Path,
        bytes: &[u8],
        len: u64,
        modified: Option<SystemTime>,
    ) -> std::io::Result<Prepared> {
        let etag = format!("\"{:016x}-{:x}\"", fnv1a(bytes), bytes.len());
        let gzip = if compressible(name) {
            let level = if bytes.len() <= BEST_LEVEL_LIMIT {
                Compression::best()
            } else {
                Compression::default()
            };
            let mut encoder = GzEncoder::new(Vec::with_capacity(bytes.len() / 3 + 64), level);
            encoder.write_all(bytes)?;
            Some(encoder.finish()?)
                .filter(|gz| gz.len() < bytes.len())
                .map(Arc::new)
        } else {
            None
        };
        let br = OnceLock::new();
        if !compressible(name) || bytes.len() > BEST_LEVEL_LIMIT {
            let _ = br.set(None);
        }
        Ok(Prepared {
            len,
            modified,
            etag,
            gzip,
            br,
        })
    }

    /// Whether its brotli body is still to be made.
    fn wants_brotli(&self) -> bool {
        self.br.get().is_none()
    }

    /// Makes its brotli body from `bytes` (its identity body), at [`BROTLI_QUALITY`]; kept only
    /// when smaller than the gzip one.
    fn brotli_now(&self, bytes: &[u8]) {
        let params = brotli::enc::BrotliEncoderParams {
            quality: BROTLI_QUALITY,
            lgwin: 22,
            ..Default::default()
        };
        let mut out = Vec::with_capacity(bytes.len() / 3 + 64);
        let made = brotli::BrotliCompress(&mut &bytes[..], &mut out, &params).is_ok()
            && self.gzip.as_ref().map_or(bytes.len(), |gz| gz.len()) > out.len();
        let _ = self.br.set(made.then(|| Arc::new(out)));
    }

    /// Makes its brotli body from `bytes` (its identity body) on a thread of its own: requests
    /// meanwhile get gzip.
    pub(crate) fn brotli_later(self: &Arc<Self>, bytes: Cow<'static, [u8]>) {
        if !self.wants_brotli() {
            return;
        }
        let me = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("brotli".into())
            .spawn(move || me.brotli_now(&bytes));
        if spawned.is_err() {
            let _ = self.br.set(None);
        }
    }

    /// The body for a request with `headers`: brotli when it takes brotli and there is a
    /// brotli body, else gzip likewise, else `None` (identity); with its `Content-Encoding` and
    /// its ETag (the identity one with `-br` or `-gz` inside the quotes: a strong ETag names one
    /// representation).
    pub(crate) fn encoded(
        &self,
        headers: &HeaderMap,
    ) -> Option<(&Arc<Vec<u8>>, &'static str, String)> {
        let tagged = |suffix: &str| format!("{}-{suffix}\"", self.etag.trim_end_matches('"'));
        if let Some(br) = self
            .br
            .get()
            .and_then(Option::as_ref)
            .filter(|_| accepts(headers, "br"))
        {
            return Some((br, "br", tagged("br")));
        }
        self.gzip
            .as_ref()
            .filter(|_| accepts(headers, "gzip"))
            .map(|gz| (gz, "gzip", tagged("gz")))
    }
}

/// 64-bit FNV-1a of `bytes`: stable across builds and platforms, so an ETag survives a restart of
/// the server or a new build of it.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Whether a file is worth gzip-encoding, from its name: text and wasm, not images or `.zst`.
pub(crate) fn compressible(path: &Path) -> bool {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    matches!(
        ext.as_str(),
        "html"
            | "htm"
            | "js"
            | "mjs"
            | "css"
            | "json"
            | "map"
            | "wasm"
            | "jsonl"
            | "svg"
            | "txt"
            | "md"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_follow_the_content_and_zst_is_not_compressed() {
        let dir = std::env::temp_dir().join(format!("slotscope-serve-etag-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let js = dir.join("a.js");
        std::fs::write(&js, "let x = 1;\n".repeat(200)).unwrap();
        let a = Prepared::of(&js, 0, None).unwrap().0;
        let b = Prepared::of(&js, 1, None).unwrap().0;
        assert_eq!(a.etag, b.etag, "the same bytes, the same ETag");
        assert!(a.etag.starts_with('"') && a.etag.ends_with('"'));
        let req = crate::serve::request::headers;
        let tag = |suffix: &str| format!("{}-{suffix}\"", &a.etag[..a.etag.len() - 1]);
        let (gz, coding, etag) = a.encoded(&req("Accept-Encoding: gzip")).unwrap();
        assert_eq!((coding, etag), ("gzip", tag("gz")));
        assert!(gz.len() < 200);
        // Brotli when the client takes it, once made: smaller still, its own ETag.
        assert!(a.wants_brotli());
        a.brotli_now("let x = 1;\n".repeat(200).as_bytes());
        let (br, coding, etag) = a
            .encoded(&req("Accept-Encoding: gzip, deflate, br"))
            .unwrap();
        assert_eq!((coding, etag), ("br", tag("br")));
        assert!(br.len() < gz.len(), "{} {}", br.len(), gz.len());
        let mut plain = Vec::new();
        brotli::BrotliDecompress(&mut &br[..], &mut plain).unwrap();
        assert_eq!(plain, "let x = 1;\n".repeat(200).into_bytes());
        assert!(a.encoded(&req("Accept-Encoding: identity")).is_none());
        std::fs::write(&js, "let x = 2;\n".repeat(200)).unwrap();
        assert_ne!(Prepared::of(&js, 0, None).unwrap().0.etag, a.etag);
        let zst = dir.join("r.jsonl.zst");
        std::fs::write(&zst, "z".repeat(1000)).unwrap();
        // The bytes come back to make the brotli body from only when one is to be made.
        assert!(Prepared::of(&js, 0, None).unwrap().1.is_some());
        let (z, z_bytes) = Prepared::of(&zst, 0, None).unwrap();
        assert!(z_bytes.is_none());
        assert!(z.gzip.is_none() && !z.wants_brotli());
        assert!(compressible(Path::new("x_bg.wasm")) && compressible(Path::new("r.jsonl")));
        assert!(!compressible(Path::new("r.jsonl.zst")) && !compressible(Path::new("a.png")));
        let big = Prepared::of(&zst, CONTENT_LIMIT + 1, Some(UNIX_EPOCH))
            .unwrap()
            .0;
        assert!(
            big.gzip.is_none() && !big.wants_brotli() && big.etag.starts_with("\"s"),
            "{}",
            big.etag
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
