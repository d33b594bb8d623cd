//! The viewer's server behind `slotscope serve`: a minimal HTTP/1.1 static file server on 127.0.0.1
//! for the browser viewer.
//!
//! It serves the built viewer (`scripts/build-web` writes it to `web/dist`) and, when given one, a
//! recording at `/recording/<file name>`, then prints the URL that opens the viewer on it. Only `GET`
//! and `HEAD` are answered, one request per connection; paths that climb out of the served
//! directory (`..`, encoded or not) are refused. Nothing is listening beyond the loopback address.

use std::future::Future;
use std::io::{IsTerminal, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

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
}

/// What to serve: the viewer's directory (`--dist`, else found as [`resolve_dist`] says) and, if
/// given, a recording; or why either cannot be served.
pub fn site(dist: Option<&Path>, recording: Option<&Path>) -> Result<Site, String> {
    let dist = resolve_dist(dist)?;
    let recording = recording.map(recording_for).transpose()?;
    Ok(Site { dist, recording })
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
            let len = f.metadata().await?.len();
            let header = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {len}\r\n\
                 Cache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
                content_type(&file)
            );
            stream.write_all(header.as_bytes()).await?;
            if !head_only {
                tokio::io::copy(&mut f, &mut stream).await?;
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
}
