//! The viewer's server behind `slotscope serve`: a minimal HTTP/1.1 static file server on 127.0.0.1
//! for the browser viewer.
//!
//! It serves the built viewer (`scripts/build-web` writes it to `web/dist`) and, when given one, a
//! recording at `/recording/<file name>`, then prints the URL that opens the viewer on it. Only `GET`
//! and `HEAD` are answered, one request per connection; paths that climb out of the served
//! directory (`..`, encoded or not) are refused. Nothing is listening beyond the loopback address.
//!
//! A reload costs (almost) nothing: every file carries a strong `ETag` and `Cache-Control:
//! no-cache`, so the browser revalidates each time and an unchanged file is answered `304 Not
//! Modified` with no body; compressible files (html, js, css, json, wasm, jsonl, …, never the
//! already compressed `.zst`) are sent gzip-encoded to a client whose `Accept-Encoding` allows it,
//! compressed once per file version and kept in memory (see [`Prepared`]).

use std::collections::HashMap;
use std::future::Future;
use std::io::{IsTerminal, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use flate2::write::GzEncoder;
use flate2::Compression;
use slotscope_core::percent;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The recording served at `/recording/<name>`.
#[derive(Debug)]
struct Recording {
    /// The file's own name, as it appears (decoded) in the URL path.
    name: String,
    /// Where it is on disk.
    path: PathBuf,
}

/// What one server serves.
#[derive(Debug)]
pub struct Site {
    /// The viewer's directory, canonical.
    dist: PathBuf,
    /// The recording given on the command line, if any.
    recording: Option<Recording>,
    /// What is known of each file served so far, by its path; an entry stands while the file keeps
    /// its size and modification time.
    cache: Mutex<HashMap<PathBuf, Arc<Prepared>>>,
}

impl Site {
    /// The ETag and gzip body of `path`, whose metadata is `meta`: from the cache while the file
    /// keeps its size and modification time, else computed again (off the async workers) and kept.
    async fn prepared(
        &self,
        path: &Path,
        meta: &std::fs::Metadata,
    ) -> std::io::Result<Arc<Prepared>> {
        let (len, modified) = (meta.len(), meta.modified().ok());
        let cached = self
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(path)
            .filter(|p| p.len == len && p.modified == modified)
            .cloned();
        if let Some(p) = cached {
            return Ok(p);
        }
        let owned = path.to_path_buf();
        let p = tokio::task::spawn_blocking(move || Prepared::of(&owned, len, modified))
            .await
            .map_err(std::io::Error::other)??;
        let p = Arc::new(p);
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(path.to_path_buf(), Arc::clone(&p));
        Ok(p)
    }
}

/// Files up to this size get an ETag from their content and, when compressible, a gzip body kept in
/// memory; larger ones (long recordings) get an ETag from their size and modification time and are
/// sent as they are, so that serving them never reads or holds the whole file at once.
const CONTENT_LIMIT: u64 = 64 * 1024 * 1024;

/// Up to this size, gzip at its best level (the viewer's bundle: the ~1 MB wasm takes a fraction
/// of a second once); above it, the default level.
const BEST_LEVEL_LIMIT: usize = 4 * 1024 * 1024;

/// What is known of one version of a served file (one size and modification time).
///
/// The ETag is strong. For a file up to [`CONTENT_LIMIT`] it is a hash of the file's bytes (64-bit
/// FNV-1a) and its length, computed once per version and cached, so a file rewritten with the same
/// bytes keeps its ETag; for a larger file it is its size and modification time in nanoseconds
/// (hashing hundreds of MB on every change would cost more than it saves). The gzip body has its
/// own ETag (the same with `-gz`), as a strong ETag names one representation.
#[derive(Debug)]
struct Prepared {
    /// The size it was prepared at.
    len: u64,
    /// The modification time it was prepared at.
    modified: Option<SystemTime>,
    /// The identity body's ETag, quoted.
    etag: String,
    /// The gzip-encoded body, for a compressible file up to [`CONTENT_LIMIT`] that gzip makes
    /// smaller.
    gzip: Option<Arc<Vec<u8>>>,
}

impl Prepared {
    /// Reads (if small enough), hashes and compresses the file at `path`, stated as `len` bytes
    /// modified at `modified`.
    fn of(path: &Path, len: u64, modified: Option<SystemTime>) -> std::io::Result<Prepared> {
        if len > CONTENT_LIMIT {
            let nanos = modified
                .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            return Ok(Prepared {
                len,
                modified,
                etag: format!("\"s{len:x}-{nanos:x}\""),
                gzip: None,
            });
        }
        // Should the file change between the metadata and this read, the entry is keyed by the
        // old metadata and is replaced on the next request, which sees the new one.
        let bytes = std::fs::read(path)?;
        let etag = format!("\"{:016x}-{:x}\"", fnv1a(&bytes), bytes.len());
        let gzip = if compressible(path) {
            let level = if bytes.len() <= BEST_LEVEL_LIMIT {
                Compression::best()
            } else {
                Compression::default()
            };
            let mut encoder = GzEncoder::new(Vec::with_capacity(bytes.len() / 3 + 64), level);
            encoder.write_all(&bytes)?;
            Some(encoder.finish()?)
                .filter(|gz| gz.len() < bytes.len())
                .map(Arc::new)
        } else {
            None
        };
        Ok(Prepared {
            len,
            modified,
            etag,
            gzip,
        })
    }

    /// The gzip body's ETag: the identity one with `-gz` inside the quotes.
    fn gzip_etag(&self) -> String {
        format!("{}-gz\"", self.etag.trim_end_matches('"'))
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
fn compressible(path: &Path) -> bool {
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

/// The values of every `name:` header line of a request head (case-insensitive name).
fn header_values<'a>(head: &'a str, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    head.lines().skip(1).filter_map(move |line| {
        let (k, v) = line.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Whether the request's `Accept-Encoding` allows gzip (`gzip` / `x-gzip`, or `*`, with a non-zero
/// `q`). No header: identity only.
fn accepts_gzip(head: &str) -> bool {
    let mut star = None;
    for value in header_values(head, "accept-encoding") {
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or_default().trim();
            let q = parts
                .find_map(|p| {
                    let (k, v) = p.split_once('=')?;
                    k.trim()
                        .eq_ignore_ascii_case("q")
                        .then(|| v.trim().parse::<f32>().unwrap_or(0.0))
                })
                .unwrap_or(1.0);
            if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                return q > 0.0;
            }
            if coding == "*" {
                star = Some(q > 0.0);
            }
        }
    }
    star.unwrap_or(false)
}

/// Whether the request's `If-None-Match` names `etag` (or is `*`): then the client's copy is
/// current. Compared weakly, as RFC 9110 says for this header.
fn not_modified(head: &str, etag: &str) -> bool {
    header_values(head, "if-none-match").any(|v| {
        v.split(',')
            .map(str::trim)
            .any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == etag)
    })
}

/// What to serve: the viewer's directory (`--dist`, else found as [`resolve_dist`] says) and, if
/// given, a recording; or why either cannot be served.
pub fn site(dist: Option<&Path>, recording: Option<&Path>) -> Result<Site, String> {
    let dist = resolve_dist(dist)?;
    let recording = recording.map(recording_for).transpose()?;
    Ok(Site {
        dist,
        recording,
        cache: Mutex::default(),
    })
}

/// Serves `site` on 127.0.0.1:`port` until `shutdown` completes (Ctrl-C / SIGTERM); with `open`,
/// also opens the URL in a browser when stdout is a terminal. Returns the exit status.
pub async fn serve(
    site: Site,
    port: u16,
    open: bool,
    shutdown: impl Future<Output = ()>,
) -> ExitCode {
    let site = Arc::new(site);
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let listener = match TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            eprintln!(
                "error: port {} on 127.0.0.1 is in use; choose another with --port N (0: any free port)",
                port
            );
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: cannot listen on {addr}: {e}");
            return ExitCode::from(2);
        }
    };
    let port = match listener.local_addr() {
        Ok(a) => a.port(),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let url = viewer_url(port, site.recording.as_ref().map(|r| r.name.as_str()));
    eprintln!(
        "slotscope: serving the viewer from {} on 127.0.0.1:{port}{} (Ctrl-C stops)",
        site.dist.display(),
        site.recording
            .as_ref()
            .map(|r| format!(", with {}", r.path.display()))
            .unwrap_or_default()
    );
    // The URL alone on stdout, so that scripts and tests can take it.
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "{url}");
    let _ = stdout.flush();
    if open && stdout.is_terminal() {
        open_browser(&url);
    }
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let site = Arc::clone(&site);
                    tokio::spawn(async move {
                        // A client that stalls or goes away costs only its own task.
                        let _ = tokio::time::timeout(
                            Duration::from_secs(60),
                            handle(stream, &site),
                        )
                        .await;
                    });
                }
                // Out of file descriptors and the like: wait a little rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
        }
    }
    eprintln!("slotscope: stopped");
    ExitCode::SUCCESS
}

/// The URL that opens the viewer: on the served recording, or on the demo.
fn viewer_url(port: u16, recording: Option<&str>) -> String {
    match recording {
        Some(name) => format!(
            "http://127.0.0.1:{port}/?src=/recording/{}",
            percent::encode(name, b"")
        ),
        None => format!("http://127.0.0.1:{port}/"),
    }
}

/// Starts `xdg-open URL` in the background; any failure is ignored (the URL is printed anyway).
fn open_browser(url: &str) {
    let child = std::process::Command::new("xdg-open")
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = child {
        // Reap it whenever it ends, so it leaves no zombie behind.
        std::thread::spawn(move || {
            let _ = child.wait();
        });
    }
}

/// The viewer's directory: `--dist`, else the first `web/dist` holding an `index.html` in the
/// current directory or above it, then above the executable. Canonical.
fn resolve_dist(given: Option<&Path>) -> Result<PathBuf, String> {
    const HINT: &str = "build the viewer with scripts/build-web (from a slotscope checkout)";
    if let Some(dir) = given {
        if !dir.join("index.html").is_file() {
            return Err(format!(
                "{} holds no built viewer (no index.html); {HINT}, or pass its output directory with --dist",
                dir.display()
            ));
        }
        return dir
            .canonicalize()
            .map_err(|e| format!("{}: {e}", dir.display()));
    }
    let mut starts = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        starts.push(cwd);
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.canonicalize().ok())
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    {
        starts.push(dir);
    }
    for start in &starts {
        for dir in start.ancestors() {
            let dist = dir.join("web").join("dist");
            if dist.join("index.html").is_file() {
                return dist
                    .canonicalize()
                    .map_err(|e| format!("{}: {e}", dist.display()));
            }
        }
    }
    Err(format!(
        "the viewer is not built: no web/dist/index.html in the current directory, the slotscope \
         executable's, or any directory above them; {HINT}, or pass its directory with --dist DIR"
    ))
}

/// Checks FILE and names it for the URL.
fn recording_for(path: &Path) -> Result<Recording, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a file", path.display()));
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| format!("{}: the file name is not UTF-8", path.display()))?
        .to_string();
    Ok(Recording {
        name,
        path: path.to_path_buf(),
    })
}

/// What a request asked for, once checked.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// A file to send.
    File(PathBuf),
    /// A path that tries to leave the served directory: 403.
    Refused,
    /// Nothing there: 404.
    Missing,
}

/// Maps a request's path (query and fragment removed, still percent-encoded) to what to send.
fn route(site: &Site, raw_path: &str) -> Target {
    let Some(path) = percent::decode(raw_path) else {
        return Target::Refused;
    };
    if !path.starts_with('/') || path.contains('\\') || path.contains('\0') {
        return Target::Refused;
    }
    let rel = path.trim_start_matches('/');
    // Every segment must be a plain name: no `..`, `.`, or root.
    if rel
        .split('/')
        .any(|seg| seg == ".." || seg == "." || seg.contains(':'))
    {
        return Target::Refused;
    }
    if let Some(name) = rel.strip_prefix("recording/") {
        return match &site.recording {
            Some(r) if r.name == name => Target::File(r.path.clone()),
            _ => Target::Missing,
        };
    }
    let rel = if rel.is_empty() || rel.ends_with('/') {
        format!("{rel}index.html")
    } else {
        rel.to_string()
    };
    let candidate = site.dist.join(&rel);
    if Path::new(&rel)
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Target::Refused;
    }
    match candidate.canonicalize() {
        // A symbolic link inside the bundle must not lead outside it either.
        Ok(real) if !real.starts_with(&site.dist) => Target::Refused,
        Ok(real) if real.is_file() => Target::File(real),
        Ok(real) if real.join("index.html").is_file() => Target::File(real.join("index.html")),
        _ => Target::Missing,
    }
}

/// The Content-Type of a file, from its name.
fn content_type(path: &Path) -> &'static str {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let ext = name.rsplit('.').next().unwrap_or_default();
    match ext.to_ascii_lowercase().as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "jsonl" => "application/jsonl; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Answers one request on `stream`, then closes it.
async fn handle(mut stream: TcpStream, site: &Site) -> std::io::Result<()> {
    let Some(head) = read_head(&mut stream).await? else {
        return respond_error(&mut stream, 400, "Bad Request", true).await;
    };
    let mut words = head.lines().next().unwrap_or_default().split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let head_only = method == "HEAD";
    if method != "GET" && !head_only {
        return respond_error(&mut stream, 405, "Method Not Allowed", false).await;
    }
    let path = target.split(['?', '#']).next().unwrap_or_default();
    match route(site, path) {
        // Browsers ask for an icon on their own; without one in the bundle, answer "nothing" rather
        // than a 404 that shows as an error in the page's console.
        Target::Missing if path == "/favicon.ico" => {
            stream
                .write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
                .await?;
            stream.shutdown().await
        }
        Target::Refused => respond_error(&mut stream, 403, "Forbidden", head_only).await,
        Target::Missing => respond_error(&mut stream, 404, "Not Found", head_only).await,
        Target::File(file) => {
            let Ok(mut f) = tokio::fs::File::open(&file).await else {
                return respond_error(&mut stream, 404, "Not Found", head_only).await;
            };
            let meta = f.metadata().await?;
            let Ok(prepared) = site.prepared(&file, &meta).await else {
                return respond_error(&mut stream, 404, "Not Found", head_only).await;
            };
            let gzip = prepared.gzip.as_ref().filter(|_| accepts_gzip(&head));
            let etag = match gzip {
                Some(_) => prepared.gzip_etag(),
                None => prepared.etag.clone(),
            };
            let vary = if compressible(&file) {
                "Vary: Accept-Encoding\r\n"
            } else {
                ""
            };
            if not_modified(&head, &etag) {
                let header = format!(
                    "HTTP/1.1 304 Not Modified\r\nETag: {etag}\r\nCache-Control: no-cache\r\n\
                     {vary}Connection: close\r\n\r\n"
                );
                stream.write_all(header.as_bytes()).await?;
                return stream.shutdown().await;
            }
            let (len, encoding) = match gzip {
                Some(gz) => (gz.len() as u64, "Content-Encoding: gzip\r\n"),
                None => (meta.len(), ""),
            };
            let header = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {}\r\n{encoding}Content-Length: {len}\r\n\
                 ETag: {etag}\r\nCache-Control: no-cache\r\n{vary}\
                 X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
                content_type(&file)
            );
            stream.write_all(header.as_bytes()).await?;
            if !head_only {
                match gzip {
                    Some(gz) => stream.write_all(gz).await?,
                    None => {
                        // No more than the length announced, should the file have grown since.
                        let mut body = (&mut f).take(len);
                        tokio::io::copy(&mut body, &mut stream).await?;
                    }
                }
            }
            stream.shutdown().await
        }
    }
}

/// Reads the request head (up to the blank line, at most 16 KiB); `None` if it is malformed.
/// Shared by the metrics endpoint (`crate::metrics_server`).
pub(crate) async fn read_head(stream: &mut TcpStream) -> std::io::Result<Option<String>> {
    const LIMIT: usize = 16 * 1024;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            buf.truncate(end);
            return Ok(String::from_utf8(buf).ok());
        }
        if buf.len() > LIMIT {
            return Ok(None);
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Sends a short plain-text error response.
async fn respond_error(
    stream: &mut TcpStream,
    code: u16,
    reason: &str,
    head_only: bool,
) -> std::io::Result<()> {
    let body = format!("{code} {reason}\n");
    let mut out = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if !head_only {
        out.push_str(&body);
    }
    stream.write_all(out.as_bytes()).await?;
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> (PathBuf, Site) {
        let dir = std::env::temp_dir().join(format!("slotscope-serve-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("dist/demo")).unwrap();
        std::fs::write(dir.join("dist/index.html"), "<html></html>").unwrap();
        std::fs::write(dir.join("dist/demo/a.jsonl.zst"), b"x").unwrap();
        std::fs::write(dir.join("secret.txt"), "no").unwrap();
        std::fs::write(dir.join("my rec.jsonl"), "{}").unwrap();
        let site = Site {
            dist: dir.join("dist").canonicalize().unwrap(),
            recording: Some(recording_for(&dir.join("my rec.jsonl")).unwrap()),
            cache: Mutex::default(),
        };
        (dir, site)
    }

    #[test]
    fn routes_files_the_recording_and_refuses_escapes() {
        let (dir, site) = site();
        assert_eq!(
            route(&site, "/"),
            Target::File(site.dist.join("index.html"))
        );
        assert_eq!(
            route(&site, "/demo/a.jsonl.zst"),
            Target::File(site.dist.join("demo/a.jsonl.zst"))
        );
        assert_eq!(
            route(&site, "/recording/my%20rec.jsonl"),
            Target::File(dir.join("my rec.jsonl"))
        );
        assert_eq!(route(&site, "/recording/other.jsonl"), Target::Missing);
        assert_eq!(route(&site, "/nope.js"), Target::Missing);
        for bad in [
            "/../secret.txt",
            "/%2e%2e/secret.txt",
            "/demo/../../secret.txt",
            "/recording/../secret.txt",
            "/..%2fsecret.txt",
            "/%5c..%5csecret.txt",
            "/%zz",
            "relative",
        ] {
            assert_eq!(route(&site, bad), Target::Refused, "{bad}");
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn content_types_the_browser_needs() {
        assert_eq!(content_type(Path::new("a_bg.wasm")), "application/wasm");
        assert!(content_type(Path::new("a.js")).starts_with("text/javascript"));
        assert!(content_type(Path::new("index.html")).starts_with("text/html"));
        assert!(content_type(Path::new("style.css")).starts_with("text/css"));
        assert_eq!(
            content_type(Path::new("r.jsonl.zst")),
            "application/octet-stream"
        );
    }

    #[test]
    fn urls_name_the_recording_escaped() {
        assert_eq!(viewer_url(80, None), "http://127.0.0.1:80/");
        assert_eq!(
            viewer_url(8080, Some("my rec&1.jsonl.zst")),
            "http://127.0.0.1:8080/?src=/recording/my%20rec%261.jsonl.zst"
        );
        assert_eq!(percent::decode("a%20b").as_deref(), Some("a b"));
        assert_eq!(percent::decode("a%2"), None);
    }

    #[test]
    fn accept_encoding_and_if_none_match() {
        let req = |h: &str| format!("GET / HTTP/1.1\r\nHost: x\r\n{h}");
        assert!(accepts_gzip(&req("Accept-Encoding: gzip, deflate, br")));
        assert!(accepts_gzip(&req("accept-encoding: br;q=1.0, GZIP;q=0.5")));
        assert!(accepts_gzip(&req("Accept-Encoding: *")));
        assert!(!accepts_gzip(&req("Accept-Encoding: gzip;q=0, *")));
        assert!(!accepts_gzip(&req("Accept-Encoding: br, identity")));
        assert!(!accepts_gzip(&req("Accept-Encoding: identity")));
        assert!(!accepts_gzip(&req("X-Other: gzip")));
        assert!(!accepts_gzip("GET / HTTP/1.1\r\nAccept-Encoding"));
        assert!(not_modified(&req("If-None-Match: \"a\", \"b\""), "\"b\""));
        assert!(not_modified(&req("If-None-Match: W/\"b\""), "\"b\""));
        assert!(not_modified(&req("If-None-Match: *"), "\"b\""));
        assert!(!not_modified(&req("If-None-Match: \"a\""), "\"b\""));
        assert!(!not_modified(&req("If-Match: \"b\""), "\"b\""));
    }

    #[test]
    fn etags_follow_the_content_and_zst_is_not_compressed() {
        let dir = std::env::temp_dir().join(format!("slotscope-serve-etag-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let js = dir.join("a.js");
        std::fs::write(&js, "let x = 1;\n".repeat(200)).unwrap();
        let a = Prepared::of(&js, 0, None).unwrap();
        let b = Prepared::of(&js, 1, None).unwrap();
        assert_eq!(a.etag, b.etag, "the same bytes, the same ETag");
        assert!(a.etag.starts_with('"') && a.etag.ends_with('"'));
        assert_eq!(
            a.gzip_etag(),
            format!("{}-gz\"", &a.etag[..a.etag.len() - 1])
        );
        assert!(a.gzip.as_ref().unwrap().len() < 200);
        std::fs::write(&js, "let x = 2;\n".repeat(200)).unwrap();
        assert_ne!(Prepared::of(&js, 0, None).unwrap().etag, a.etag);
        let zst = dir.join("r.jsonl.zst");
        std::fs::write(&zst, "z".repeat(1000)).unwrap();
        assert!(Prepared::of(&zst, 0, None).unwrap().gzip.is_none());
        assert!(compressible(Path::new("x_bg.wasm")) && compressible(Path::new("r.jsonl")));
        assert!(!compressible(Path::new("r.jsonl.zst")) && !compressible(Path::new("a.png")));
        let big = Prepared::of(&zst, CONTENT_LIMIT + 1, Some(UNIX_EPOCH)).unwrap();
        assert!(
            big.gzip.is_none() && big.etag.starts_with("\"s"),
            "{}",
            big.etag
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
