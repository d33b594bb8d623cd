//! The viewer's server behind `slotscope serve`: a static file server on 127.0.0.1 for the browser
//! viewer, speaking HTTP/1.1 through hyper (keep-alive included).
//!
//! It serves the built viewer (`scripts/build-web` writes it to `web/dist`) and, when given one, a
//! recording at `/recording/<file name>`, then prints the URL that opens the viewer on it. The viewer
//! comes from `--dist DIR`, else the bundle embedded in the binary at build time
//! ([`crate::serve::bundle`]), else a `web/dist` found on disk ([`site`]). Only `GET` and `HEAD` are
//! answered (`405` otherwise); paths that climb out of the served directory (`..`,
//! encoded or not) are refused, and the embedded bundle has no file outside itself to reach.
//! Nothing is listening beyond the loopback address.
//!
//! A reload costs (almost) nothing: every file carries a strong `ETag` and `Cache-Control:
//! no-cache`, so the browser revalidates each time and an unchanged file is answered `304 Not
//! Modified` with no body; compressible files (html, js, css, json, wasm, jsonl, …, never the
//! already compressed `.zst`) are sent gzip-encoded to a client whose `Accept-Encoding` allows it,
//! compressed once per file version and kept in memory (see [`Prepared`]). An embedded file is
//! answered exactly as the same bytes on disk would be.

use std::borrow::Cow;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io::{IsTerminal, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use slotscope_core::overview::SUFFIX;
use slotscope_core::percent;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::io::ReaderStream;

use crate::serve::admission::{Admission, VIEWER_CONNECTIONS};
use crate::serve::bundle::Bundle;
use crate::serve::dist::{checked_dist, find_dist, search_starts};
use crate::serve::request::not_modified;
use crate::serve::served_file::{compressible, Prepared};
use crate::store::overview_file;

/// The recording served at `/recording/<name>`.
#[derive(Debug)]
struct Recording {
    /// The file's own name, as it appears (decoded) in the URL path.
    name: String,
    /// Where it is on disk.
    path: PathBuf,
}

/// Where the viewer's files come from.
#[derive(Debug)]
enum Viewer {
    /// A directory on disk, canonical.
    Dir(PathBuf),
    /// A bundle in memory (the one embedded at build time), with what is known of each of its
    /// files (by their number in the bundle) once first served.
    Bundle(Bundle, Vec<OnceLock<Arc<Prepared>>>),
}

impl Viewer {
    /// Serves `bundle`.
    fn bundle(bundle: Bundle) -> Viewer {
        Viewer::Bundle(bundle, (0..bundle.len()).map(|_| OnceLock::new()).collect())
    }
}

/// What one server serves.
#[derive(Debug)]
pub struct Site {
    /// The viewer.
    viewer: Viewer,
    /// A note to print at start beside the source (an embedded bundle older than `web/dist`).
    note: Option<String>,
    /// The recording given on the command line, if any.
    recording: Option<Recording>,
    /// What is known of each file served so far, by its path; an entry stands while the file keeps
    /// its size and modification time.
    cache: Mutex<HashMap<PathBuf, Arc<Prepared>>>,
}

/// The viewer's first files: prepared (ETag and gzip, brotli on a thread of its own) as soon as
/// the server starts, so that the first page load does not wait for them.
const WARM: &[&str] = &[
    "/",
    "/style.css",
    "/slotscope_web.js",
    "/slotscope_web_bg.wasm",
    "/reader/worker.js",
    "/reader/slotscope_reader.js",
    "/reader/slotscope_reader_bg.wasm",
];

impl Site {
    /// Prepares the [`WARM`] files.
    async fn warm(&self) {
        for path in WARM {
            match route(self, path) {
                Target::File(file) => {
                    if let Ok(meta) = tokio::fs::metadata(&file).await {
                        let _ = self.prepared(&file, &meta).await;
                    }
                }
                Target::Embedded(i) => {
                    let _ = self.prepared_embedded(i).await;
                }
                Target::Refused | Target::Missing => {}
            }
        }
    }

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
        let (p, bytes) = tokio::task::spawn_blocking(move || Prepared::of(&owned, len, modified))
            .await
            .map_err(std::io::Error::other)??;
        let p = Arc::new(p);
        if let Some(bytes) = bytes {
            p.brotli_later(Cow::Owned(bytes));
        }
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(path.to_path_buf(), Arc::clone(&p));
        Ok(p)
    }

    /// The ETag and gzip body of the embedded file number `i` of `bundle`: computed (off the async
    /// workers) when first asked for, then kept.
    async fn prepared_embedded(&self, i: usize) -> std::io::Result<Arc<Prepared>> {
        let Viewer::Bundle(bundle, prepared) = &self.viewer else {
            return Err(std::io::Error::other("no embedded bundle is served"));
        };
        if let Some(p) = prepared[i].get() {
            return Ok(Arc::clone(p));
        }
        let (rel, bytes) = bundle.file(i);
        let p = tokio::task::spawn_blocking(move || {
            Prepared::from_bytes(Path::new(rel), bytes, bytes.len() as u64, None)
        })
        .await
        .map_err(std::io::Error::other)??;
        // Two first requests at once compute it twice; both get the one kept.
        let mut made = false;
        let p = Arc::clone(prepared[i].get_or_init(|| {
            made = true;
            Arc::new(p)
        }));
        if made {
            p.brotli_later(Cow::Borrowed(bytes));
        }
        Ok(p)
    }
}

/// What to serve and, if given, a recording; or why either cannot be served. The viewer is, in this
/// order: `dist` (`--dist DIR`), checked; the bundle embedded at build time; the first `web/dist`
/// found on disk as [`crate::serve::dist::find_dist`] says. Serving the embedded bundle while a `web/dist` on disk
/// differs from it (rebuilt since the binary was) leaves a note to print at start.
pub fn site(dist: Option<&Path>, recording: Option<&Path>) -> Result<Site, String> {
    let (viewer, note) = match (dist, Bundle::embedded()) {
        (Some(dir), _) => (Viewer::Dir(checked_dist(dir)?), None),
        (None, Some(bundle)) => {
            let note = find_dist(&search_starts())
                .filter(|dir| bundle.differs_from(dir))
                .map(|dir| {
                    format!(
                        "{} differs from the viewer embedded in this binary (rebuilt since?); \
                         `cargo build -p slotscope` (or `cargo install --path collector`) embeds it \
                         again, or serve it as it is with --dist {}",
                        dir.display(),
                        dir.display()
                    )
                });
            (Viewer::bundle(bundle), note)
        }
        (None, None) => (
            Viewer::Dir(find_dist(&search_starts()).ok_or_else(|| NO_VIEWER.to_string())?),
            None,
        ),
    };
    let recording = recording.map(recording_for).transpose()?;
    Ok(Site {
        viewer,
        note,
        recording,
        cache: Mutex::default(),
    })
}

/// What `serve` says when it has no viewer at all: none embedded, none found, no `--dist`.
const NO_VIEWER: &str = "this slotscope was built without the viewer (there was no built \
    web/dist when it was compiled), and no web/dist/index.html is in the current directory, the \
    slotscope executable's, or any directory above them. To get it, in a slotscope checkout run \
    scripts/build-web, then rebuild slotscope (cargo build -p slotscope, or cargo install --path \
    collector), which embeds web/dist in the binary; or pass a built viewer's directory with \
    --dist DIR";

/// Where the viewer is served from, for the start-up line.
fn source_description(viewer: &Viewer) -> String {
    match viewer {
        Viewer::Dir(dir) => format!("the viewer from {}", dir.display()),
        Viewer::Bundle(bundle, _) => format!(
            "the viewer embedded in this binary ({} files, {} KB{})",
            bundle.len(),
            bundle.bytes().div_ceil(1000),
            Bundle::embedded_source()
                .map(|s| format!(", built from {s}"))
                .unwrap_or_default()
        ),
    }
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
        "slotscope: serving {} on 127.0.0.1:{port}{} (Ctrl-C stops)",
        source_description(&site.viewer),
        site.recording
            .as_ref()
            .map(|r| format!(", with {}", r.path.display()))
            .unwrap_or_default()
    );
    if let Some(note) = &site.note {
        eprintln!("slotscope: note: {note}");
    }
    // The URL alone on stdout, so that scripts and tests can take it.
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "{url}");
    let _ = stdout.flush();
    if open && stdout.is_terminal() {
        open_browser(&url);
    }
    let warming = Arc::clone(&site);
    tokio::spawn(async move { warming.warm().await });
    tokio::pin!(shutdown);
    // A client that stalls or goes away costs only its own task and place; the places are
    // bounded (see `admission`).
    let admission = Admission::new(VIEWER_CONNECTIONS);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let site = Arc::clone(&site);
                    admission.admit(stream, move |stream| async move {
                        let _ = handle(stream, site).await;
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
    /// The embedded bundle's file of this number.
    Embedded(usize),
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
            // Its overview, when one is there.
            Some(r) if name.strip_suffix(SUFFIX) == Some(r.name.as_str()) => {
                let overview = overview_file::path_for(&r.path);
                if overview.is_file() {
                    Target::File(overview)
                } else {
                    Target::Missing
                }
            }
            _ => Target::Missing,
        };
    }
    let rel = if rel.is_empty() || rel.ends_with('/') {
        format!("{rel}index.html")
    } else {
        rel.to_string()
    };
    if Path::new(&rel)
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Target::Refused;
    }
    let dist = match &site.viewer {
        Viewer::Dir(dist) => dist,
        // No filesystem behind it: a path is a file of the bundle, or a directory of it holding an
        // index.html, or nothing.
        Viewer::Bundle(bundle, _) => {
            return bundle
                .find(&rel)
                .or_else(|| bundle.find(&format!("{rel}/index.html")))
                .map_or(Target::Missing, |(i, _)| Target::Embedded(i));
        }
    };
    match dist.join(&rel).canonicalize() {
        // A symbolic link inside the bundle must not lead outside it either.
        Ok(real) if !real.starts_with(dist) => Target::Refused,
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

/// Serves one connection ([`crate::serve::http1::connection`]), each request answered by
/// [`answer`].
async fn handle(stream: TcpStream, site: Arc<Site>) -> Result<(), hyper::Error> {
    let service = service_fn(move |req| answer(req, Arc::clone(&site)));
    crate::serve::http1::connection()
        // The responses are the same bytes whenever they are asked for (the e2e tests and the
        // embedded bundle's compare them); the ETag says what a date would.
        .auto_date_header(false)
        .serve_connection(TokioIo::new(stream), service)
        .await
}

/// A response body: bytes in memory, or a file read as it is sent.
type Body = UnsyncBoxBody<Bytes, std::io::Error>;

/// A body of `bytes`.
fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// Answers one request.
async fn answer(req: Request<Incoming>, site: Arc<Site>) -> Result<Response<Body>, Infallible> {
    let headers = req.headers();
    let head_only = req.method() == Method::HEAD;
    if req.method() != Method::GET && !head_only {
        return Ok(error(StatusCode::METHOD_NOT_ALLOWED, false));
    }
    let path = req.uri().path();
    Ok(match route(&site, path) {
        // Browsers ask for an icon on their own, and the viewer for a recording's overview
        // (`slotscope index`) before the recording: without one, answer "nothing" rather than a
        // 404 that shows as an error in the page's console.
        Target::Missing if path == "/favicon.ico" || path.ends_with(SUFFIX) => {
            let mut r = Response::new(full(Bytes::new()));
            *r.status_mut() = StatusCode::NO_CONTENT;
            r
        }
        Target::Refused => error(StatusCode::FORBIDDEN, head_only),
        Target::Missing => error(StatusCode::NOT_FOUND, head_only),
        Target::File(file) => {
            let Ok(f) = tokio::fs::File::open(&file).await else {
                return Ok(error(StatusCode::NOT_FOUND, head_only));
            };
            let prepared = match f.metadata().await {
                Ok(meta) => site.prepared(&file, &meta).await.map(|p| (p, meta.len())),
                Err(e) => Err(e),
            };
            let Ok((prepared, len)) = prepared else {
                return Ok(error(StatusCode::NOT_FOUND, head_only));
            };
            respond(headers, head_only, &file, &prepared, Identity::File(f, len))
        }
        Target::Embedded(i) => {
            let (Viewer::Bundle(bundle, _), Ok(prepared)) =
                (&site.viewer, site.prepared_embedded(i).await)
            else {
                return Ok(error(StatusCode::NOT_FOUND, head_only));
            };
            let (rel, bytes) = bundle.file(i);
            respond(
                headers,
                head_only,
                Path::new(rel),
                &prepared,
                Identity::Bytes(bytes),
            )
        }
    })
}

/// The identity body of a file to send.
enum Identity {
    /// An open file on disk, and its length when it was prepared.
    File(tokio::fs::File, u64),
    /// Bytes in memory (an embedded file).
    Bytes(&'static [u8]),
}

/// The answer to a request (with `headers`) for the file named `name` (for its type and
/// compressibility), known as `prepared`, whose identity body is `body`: `304` when the client's
/// copy is current, else `200` with the brotli or gzip body when the client accepts it, else the
/// identity body.
fn respond(
    headers: &header::HeaderMap,
    head_only: bool,
    name: &Path,
    prepared: &Prepared,
    body: Identity,
) -> Response<Body> {
    let encoded = prepared.encoded(headers);
    let etag = match &encoded {
        Some((_, _, etag)) => etag.clone(),
        None => prepared.etag.clone(),
    };
    let mut r = Response::builder()
        .header(header::ETAG, &etag)
        .header(header::CACHE_CONTROL, "no-cache");
    if compressible(name) {
        r = r.header(header::VARY, "Accept-Encoding");
    }
    if not_modified(headers, &etag) {
        return r
            .status(StatusCode::NOT_MODIFIED)
            .body(full(Bytes::new()))
            .unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, true));
    }
    let identity_len = match &body {
        Identity::File(_, len) => *len,
        Identity::Bytes(bytes) => bytes.len() as u64,
    };
    let len = match &encoded {
        Some((body, coding, _)) => {
            r = r.header(header::CONTENT_ENCODING, *coding);
            body.len() as u64
        }
        None => identity_len,
    };
    r = r
        .header(header::CONTENT_TYPE, content_type(name))
        .header(header::CONTENT_LENGTH, len)
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    let body = match (head_only, encoded, body) {
        (true, _, _) => full(Bytes::new()),
        (false, Some((encoded, _, _)), _) => full(encoded.as_slice().to_vec()),
        (false, None, Identity::Bytes(bytes)) => full(Bytes::from_static(bytes)),
        // No more than the length announced, should the file have grown since.
        (false, None, Identity::File(f, _)) => {
            StreamBody::new(ReaderStream::new(f.take(len)).map(|chunk| chunk.map(Frame::data)))
                .boxed_unsync()
        }
    };
    r.body(body)
        .unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, head_only))
}

/// A short plain-text error response.
fn error(status: StatusCode, head_only: bool) -> Response<Body> {
    let text = format!(
        "{} {}\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or_default()
    );
    let len = text.len();
    let mut r = Response::new(if head_only {
        full(Bytes::new())
    } else {
        full(text)
    });
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(header::CONTENT_LENGTH, header::HeaderValue::from(len));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The served directory of a site serving one.
    fn dist(site: &Site) -> &Path {
        match &site.viewer {
            Viewer::Dir(dir) => dir,
            Viewer::Bundle(..) => panic!("not a directory"),
        }
    }

    /// A site serving a small bundle from a fresh directory named after `name`, with a recording.
    fn site(name: &str) -> (PathBuf, Site) {
        let dir = std::env::temp_dir().join(format!("slotscope-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("dist/demo")).unwrap();
        std::fs::write(dir.join("dist/index.html"), "<html></html>").unwrap();
        std::fs::write(dir.join("dist/demo/a.jsonl.zst"), b"x").unwrap();
        std::fs::write(dir.join("secret.txt"), "no").unwrap();
        std::fs::write(dir.join("my rec.jsonl"), "{}").unwrap();
        let site = Site {
            viewer: Viewer::Dir(dir.join("dist").canonicalize().unwrap()),
            note: None,
            recording: Some(recording_for(&dir.join("my rec.jsonl")).unwrap()),
            cache: Mutex::default(),
        };
        (dir, site)
    }

    #[test]
    fn routes_files_the_recording_and_refuses_escapes() {
        let (dir, site) = site("serve-unit");
        assert_eq!(
            route(&site, "/"),
            Target::File(dist(&site).join("index.html"))
        );
        assert_eq!(
            route(&site, "/demo/a.jsonl.zst"),
            Target::File(dist(&site).join("demo/a.jsonl.zst"))
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

    /// A bundle in memory of `files` (sorted by path).
    fn bundle(files: Vec<(&'static str, Vec<u8>)>) -> Bundle {
        let table: Vec<(&'static str, &'static [u8])> = files
            .into_iter()
            .map(|(p, b)| (p, &*Box::leak(b.into_boxed_slice())))
            .collect();
        Bundle::of(Box::leak(table.into_boxed_slice()))
    }

    #[test]
    fn routes_embedded_files_by_path_and_refuses_escapes() {
        let (dir, mut site) = site("serve-unit-embedded");
        let b = bundle(vec![
            ("demo/a.jsonl.zst", b"x".to_vec()),
            ("index.html", b"<html></html>".to_vec()),
            ("whatif/index.html", b"<p>".to_vec()),
        ]);
        site.viewer = Viewer::bundle(b);
        assert_eq!(route(&site, "/"), Target::Embedded(1));
        assert_eq!(route(&site, "/index.html"), Target::Embedded(1));
        assert_eq!(route(&site, "/demo/a.jsonl.zst"), Target::Embedded(0));
        assert_eq!(route(&site, "/whatif/"), Target::Embedded(2));
        assert_eq!(route(&site, "/whatif"), Target::Embedded(2));
        assert_eq!(route(&site, "/demo"), Target::Missing, "no demo/index.html");
        assert_eq!(route(&site, "/nope.js"), Target::Missing);
        assert_eq!(
            route(&site, "/recording/my%20rec.jsonl"),
            Target::File(dir.join("my rec.jsonl")),
            "the recording is still served from disk"
        );
        for bad in [
            "/../secret.txt",
            "/%2e%2e/index.html",
            "/demo/../index.html",
            "/demo/../../secret.txt",
            "/..%2findex.html",
            "/%5cindex.html",
            "/./index.html",
            "relative",
        ] {
            assert_eq!(route(&site, bad), Target::Refused, "{bad}");
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn finds_web_dist_from_each_start_upward_in_order() {
        let root = std::env::temp_dir().join(format!("slotscope-find-dist-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in ["a/web/dist", "a/b/c", "x/web/dist", "y/web/dist"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("a/web/dist/index.html"), "a").unwrap();
        std::fs::write(root.join("x/web/dist/index.html"), "x").unwrap();
        let found = |starts: &[&str]| {
            let starts: Vec<PathBuf> = starts.iter().map(|s| root.join(s)).collect();
            find_dist(&starts)
        };
        let a = root.join("a/web/dist").canonicalize().unwrap();
        let x = root.join("x/web/dist").canonicalize().unwrap();
        assert_eq!(found(&["a/b/c"]), Some(a.clone()), "from a directory below");
        assert_eq!(found(&["a/b/c", "x"]), Some(a), "the first start first");
        assert_eq!(found(&["y", "x"]), Some(x), "y/web/dist has no index.html");
        assert_eq!(found(&["y"]).filter(|d| d.starts_with(&root)), None);
        let _ = std::fs::remove_dir_all(root);
    }

    /// Sends `request` (its head without the blank line that ends it) to `site` over a loopback
    /// connection, asking to close it after, and returns the raw response.
    async fn exchange(site: &Arc<Site>, request: &str) -> Vec<u8> {
        use tokio::io::AsyncWriteExt;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let mut response = Vec::new();
        let request = format!("{request}Connection: close\r\n\r\n");
        let (served, ()) = tokio::join!(handle(server, Arc::clone(site)), async {
            client.write_all(request.as_bytes()).await.unwrap();
            client.read_to_end(&mut response).await.unwrap();
        });
        served.unwrap();
        response
    }

    /// The value of header `name` in a raw response ("" when absent).
    fn header_of(response: &[u8], name: &str) -> String {
        let text = String::from_utf8_lossy(response);
        let head = text.split("\r\n\r\n").next().unwrap_or_default();
        head.lines()
            .skip(1)
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default()
    }

    #[tokio::test]
    async fn an_embedded_file_is_answered_as_the_same_file_on_disk() {
        let js = "export function f(x) { return x + 1; }\n"
            .repeat(300)
            .into_bytes();
        let wasm = [&b"\0asm\x01\0\0\0"[..], &[7u8; 4000]].concat();
        let files = vec![
            ("app.js", js.clone()),
            ("app_bg.wasm", wasm.clone()),
            ("demo/a.jsonl.zst", b"\x28\xb5\x2f\xfd zst".to_vec()),
            ("index.html", b"<!doctype html><div id=app></div>".to_vec()),
        ];
        let (dir, on_disk) = site("serve-unit-same");
        let dist = dist(&on_disk).to_path_buf();
        for (rel, bytes) in &files {
            std::fs::write(dist.join(rel), bytes).unwrap();
        }
        let mut embedded = Arc::new(Site {
            viewer: Viewer::bundle(bundle(files)),
            note: None,
            recording: None,
            cache: Mutex::default(),
        });
        let mut on_disk = Arc::new(on_disk);
        const GZIP: &str = "Accept-Encoding: gzip\r\n";
        let get =
            |path: &str, headers: &str| format!("GET {path} HTTP/1.1\r\nHost: x\r\n{headers}");
        for path in ["/", "/app.js", "/app_bg.wasm", "/demo/a.jsonl.zst"] {
            for headers in ["", GZIP] {
                let want = exchange(&on_disk, &get(path, headers)).await;
                let got = exchange(&embedded, &get(path, headers)).await;
                assert!(want.starts_with(b"HTTP/1.1 200 OK\r\n"), "{path}");
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want),
                    "{path} {headers:?}: the same response, byte for byte"
                );
                let etag = header_of(&got, "etag");
                let again = exchange(
                    &embedded,
                    &get(path, &format!("{headers}If-None-Match: {etag}\r\n")),
                )
                .await;
                assert!(
                    again.starts_with(b"HTTP/1.1 304 Not Modified\r\n"),
                    "{path}"
                );
                assert!(again.ends_with(b"\r\n\r\n"), "no body");
                assert_eq!(header_of(&again, "etag"), etag);
            }
        }
        let gz = exchange(&embedded, &get("/app.js", GZIP)).await;
        assert_eq!(header_of(&gz, "content-encoding"), "gzip");
        assert_eq!(
            header_of(&gz, "content-type"),
            content_type(Path::new("a.js"))
        );
        let wasm_response = exchange(&embedded, &get("/app_bg.wasm", "")).await;
        assert!(wasm_response.ends_with(&wasm));
        assert!(exchange(&embedded, &get("/missing.js", ""))
            .await
            .starts_with(b"HTTP/1.1 404"));
        assert!(exchange(&embedded, &get("/%2e%2e/secret.txt", ""))
            .await
            .starts_with(b"HTTP/1.1 403"));
        Arc::get_mut(&mut embedded).unwrap().recording =
            Arc::get_mut(&mut on_disk).unwrap().recording.take();
        let rec = exchange(&embedded, &get("/recording/my%20rec.jsonl", "")).await;
        assert!(rec.starts_with(b"HTTP/1.1 200 OK\r\n") && rec.ends_with(b"{}"));
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
}
