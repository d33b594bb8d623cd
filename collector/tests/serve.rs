//! `slotscope serve` as the browser meets it: the real binary started on a free port of 127.0.0.1,
//! asked over plain HTTP/1.1 for the viewer's files, a recording and a path that climbs out of the
//! served directory; then killed by its PID. Every wait is bounded. The binary, copied alone to a
//! directory outside any checkout, serves the viewer embedded in it at build time.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use common::{slotscope, temp_dir, text};

/// How long any one step may take (start-up, one request).
const STEP: Duration = Duration::from_secs(20);

/// A running `slotscope serve`, killed (by its PID) when dropped.
struct Server {
    child: Child,
    url: String,
    /// What it has written to stderr so far.
    stderr: Arc<Mutex<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `slotscope serve --port 0 --no-open ARGS…` in `cwd` and waits for its URL.
    fn start(cwd: &Path, args: &[&str]) -> Server {
        Server::start_binary(Path::new(env!("CARGO_BIN_EXE_slotscope")), cwd, args)
    }

    /// Starts `EXE serve --port 0 --no-open ARGS…` in `cwd` and waits for its URL.
    fn start_binary(exe: &Path, cwd: &Path, args: &[&str]) -> Server {
        let mut child = Command::new(exe)
            .arg("serve")
            .args(["--port", "0", "--no-open"])
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start slotscope serve");
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err = child.stderr.take().expect("stderr");
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = err.read(&mut chunk) {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&chunk[..n]));
            }
        });
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut server = Server {
            child,
            url: String::new(),
            stderr,
        };
        server.url = rx
            .recv_timeout(STEP)
            .expect("slotscope serve printed no URL in time")
            .trim()
            .to_string();
        server
    }

    /// What the server has written to stderr so far (its start-up line is written before the URL).
    /// What the server wrote to stderr before its URL: its lines are written before the URL on
    /// stdout but read by another thread, so this waits until some whole lines have arrived and
    /// nothing more for 50 ms (at most [`STEP`] in all).
    fn stderr(&self) -> String {
        let deadline = Instant::now() + STEP;
        let mut last = String::new();
        loop {
            std::thread::sleep(Duration::from_millis(50));
            let text = self.stderr.lock().unwrap().clone();
            let settled = text == last && text.ends_with('\n');
            if settled || Instant::now() >= deadline {
                return text;
            }
            last = text;
        }
    }

    /// `host:port` of the server.
    fn authority(&self) -> &str {
        self.url
            .strip_prefix("http://")
            .and_then(|rest| rest.split('/').next())
            .expect("an http:// URL")
    }

    /// Sends `GET PATH` as written (no normalisation) and returns (status, headers, body).
    fn get(&self, path: &str) -> (u16, String, Vec<u8>) {
        let (status, head, body, _) = self.get_with(path, "");
        (status, head, body)
    }

    /// Sends `GET PATH` with `headers` (each line ending in CRLF) and returns (status, headers,
    /// body, bytes received in all).
    fn get_with(&self, path: &str, headers: &str) -> (u16, String, Vec<u8>, usize) {
        let mut s = TcpStream::connect(self.authority()).expect("connect");
        s.set_read_timeout(Some(STEP)).unwrap();
        s.set_write_timeout(Some(STEP)).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {}\r\n{headers}Connection: close\r\n\r\n",
            self.authority()
        )
        .unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).expect("read the response");
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a complete response head");
        let head = String::from_utf8_lossy(&raw[..end]).to_string();
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .expect("a status code");
        (status, head, raw[end + 4..].to_vec(), raw.len())
    }
}

/// The value of header `name` in a response head ("" when absent).
fn header(head: &str, name: &str) -> String {
    head.lines()
        .skip(1)
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
        .unwrap_or_default()
}

/// The Content-Type header's value.
fn content_type(head: &str) -> String {
    header(head, "content-type")
}

/// The bytes a gzip body decompresses to.
fn gunzip(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(body)
        .read_to_end(&mut out)
        .expect("a valid gzip body");
    out
}

/// A directory laid out like scripts/build-web's output, with a secret file beside it.
fn fake_viewer(name: &str) -> (PathBuf, PathBuf) {
    let root = temp_dir(name);
    let dist = root.join("web").join("dist");
    std::fs::create_dir_all(dist.join("demo")).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html><div id=app></div>").unwrap();
    std::fs::write(
        dist.join("slotscope_web.js"),
        "export default function init() {}",
    )
    .unwrap();
    std::fs::write(dist.join("slotscope_web_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    std::fs::write(
        dist.join("demo").join("incident1.jsonl.zst"),
        b"\x28\xb5\x2f\xfd",
    )
    .unwrap();
    std::fs::write(root.join("secret.txt"), "not for the browser").unwrap();
    (root, dist)
}

/// `slotscope serve --dist DIST` of the incident-2 fixture from `root`: the recording's path and
/// the server.
fn serve_fixture(root: &Path, dist: &Path) -> (PathBuf, Server) {
    let recording = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/incident2-valkey.jsonl.zst")
        .canonicalize()
        .unwrap();
    let server = Server::start(
        root,
        &[
            "--dist",
            dist.to_str().unwrap(),
            recording.to_str().unwrap(),
        ],
    );
    (recording, server)
}

#[test]
fn serves_the_viewer_a_recording_and_refuses_traversal() {
    let (root, dist) = fake_viewer("serve-main");
    let (recording, server) = serve_fixture(&root, &dist);
    assert!(
        server.url.starts_with("http://127.0.0.1:")
            && server
                .url
                .ends_with("/?src=/recording/incident2-valkey.jsonl.zst"),
        "{}",
        server.url
    );

    let (status, head, body) = server.get("/");
    assert_eq!(status, 200, "{head}");
    assert!(content_type(&head).starts_with("text/html"), "{head}");
    assert!(String::from_utf8_lossy(&body).contains("id=app"));

    let (status, head, _) = server.get("/index.html?src=/recording/x");
    assert_eq!(status, 200, "{head}");

    let (status, head, body) = server.get("/slotscope_web_bg.wasm");
    assert_eq!(status, 200, "{head}");
    assert_eq!(content_type(&head), "application/wasm");
    assert_eq!(&body[..4], b"\0asm");

    let (status, head, _) = server.get("/slotscope_web.js");
    assert_eq!(status, 200, "{head}");
    assert!(content_type(&head).starts_with("text/javascript"), "{head}");

    let (status, head, body) = server.get("/recording/incident2-valkey.jsonl.zst");
    assert_eq!(status, 200, "{head}");
    assert_eq!(content_type(&head), "application/octet-stream");
    assert_eq!(body, std::fs::read(&recording).unwrap());

    let (status, head, _) = server.get("/demo/incident1.jsonl.zst");
    assert_eq!(status, 200, "{head}");
    assert_eq!(content_type(&head), "application/octet-stream");

    for escape in [
        "/../secret.txt",
        "/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/demo/..%2f..%2fsecret.txt",
        "/recording/..%2fsecret.txt",
    ] {
        let (status, head, body) = server.get(escape);
        assert_eq!(status, 403, "{escape}: {head}");
        assert!(!String::from_utf8_lossy(&body).contains("not for the browser"));
    }

    let (status, _, body) = server.get("/favicon.ico");
    assert_eq!(
        status, 204,
        "no icon in the bundle: no content, not an error"
    );
    assert!(body.is_empty());

    let (status, _, _) = server.get("/no-such-file.js");
    assert_eq!(status, 404);
    let (status, _, _) = server.get("/recording/other.jsonl.zst");
    assert_eq!(status, 404);
    drop(server);
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn one_connection_carries_several_requests_and_only_get_and_head_are_answered() {
    let (root, dist) = fake_viewer("serve-keep-alive");
    let (recording, server) = serve_fixture(&root, &dist);
    let mut s = TcpStream::connect(server.authority()).expect("connect");
    s.set_read_timeout(Some(STEP)).unwrap();
    let host = server.authority().to_string();
    // Three requests on one connection, the last one closing it: a HEAD, a GET, and a method the
    // server does not answer. Each response says its length, so they can be told apart.
    write!(
        s,
        "HEAD /recording/incident2-valkey.jsonl.zst HTTP/1.1\r\nHost: {host}\r\n\r\n\
         GET /recording/incident2-valkey.jsonl.zst HTTP/1.1\r\nHost: {host}\r\n\r\n\
         POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read the responses");
    let want = std::fs::read(&recording).unwrap();
    let mut rest = &raw[..];
    let mut heads = Vec::new();
    for expect_body in [false, true, true] {
        let end = rest
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a complete response head");
        let head = String::from_utf8_lossy(&rest[..end]).to_string();
        let len: usize = header(&head, "content-length").parse().unwrap();
        rest = &rest[end + 4..];
        let body_len = if expect_body { len } else { 0 };
        let (body, after) = rest.split_at(body_len);
        if heads.len() == 1 {
            assert_eq!(body, &want[..], "the GET's body is the recording");
        }
        rest = after;
        heads.push((head, len));
    }
    assert!(rest.is_empty(), "nothing after the third response");
    assert!(heads[0].0.starts_with("HTTP/1.1 200"), "{}", heads[0].0);
    assert_eq!(heads[0].1, want.len(), "HEAD says the GET's length");
    assert!(heads[1].0.starts_with("HTTP/1.1 200"), "{}", heads[1].0);
    assert!(heads[2].0.starts_with("HTTP/1.1 405"), "{}", heads[2].0);
    drop(server);
    let _ = std::fs::remove_dir_all(root);
}

/// Whether `EXE serve --help` says the binary embeds the viewer.
fn embeds_viewer(exe: &Path) -> bool {
    let o = Command::new(exe)
        .args(["serve", "--help"])
        .output()
        .expect("run slotscope serve --help");
    let help = text(&o);
    let embeds = help.contains("This slotscope embeds the viewer");
    assert!(
        embeds || help.contains("This slotscope was built without the viewer"),
        "serve --help says nothing of the embedded viewer:\n{help}"
    );
    embeds
}

/// The directory the test build embedded the viewer from: `SLOTSCOPE_WEB_DIST` as `build.rs` reads
/// it, else the checkout's `web/dist`.
fn embedded_from() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    match std::env::var_os("SLOTSCOPE_WEB_DIST").filter(|v| !v.is_empty()) {
        Some(dir) => manifest.join(dir),
        None => manifest.join("../web/dist"),
    }
}

/// Whether this run must have the viewer embedded (`scripts/test` sets `SLOTSCOPE_REQUIRE_EMBEDDED`
/// once `scripts/build-web` has built it): then a binary without it fails the tests that need it
/// rather than skipping them.
fn embedded_required() -> bool {
    std::env::var_os("SLOTSCOPE_REQUIRE_EMBEDDED").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Below a `web/dist` on disk: a binary built without the viewer serves that one; a binary that
/// embeds the viewer serves its own, and notes that the one on disk differs.
#[test]
fn a_web_dist_above_the_current_directory_comes_after_the_embedded_viewer() {
    let (root, _dist) = fake_viewer("serve-find");
    let below = root.join("some").join("where");
    std::fs::create_dir_all(&below).unwrap();
    let server = Server::start(&below, &[]);
    assert!(
        server.url.starts_with("http://127.0.0.1:") && server.url.ends_with('/'),
        "the demo URL: {}",
        server.url
    );
    let (status, head, body) = server.get("/");
    assert_eq!(status, 200, "{head}");
    let stderr = server.stderr();
    if embeds_viewer(Path::new(env!("CARGO_BIN_EXE_slotscope"))) {
        assert_eq!(
            body,
            std::fs::read(embedded_from().join("index.html")).unwrap(),
            "the embedded index.html, not the one on disk"
        );
        assert!(stderr.contains("embedded in this binary"), "{stderr}");
        assert!(
            stderr.contains("note:") && stderr.contains("differs from the viewer embedded"),
            "{stderr}"
        );
    } else {
        assert!(!embedded_required(), "the viewer is not embedded");
        assert!(String::from_utf8_lossy(&body).contains("id=app"));
        assert!(stderr.contains("serving the viewer from"), "{stderr}");
    }
    drop(server);
    let _ = std::fs::remove_dir_all(root);
}

/// The binary on its own (as `cargo install` leaves it): copied to a directory outside any checkout
/// and started there, it serves the viewer embedded in it, byte for byte the built bundle, with
/// gzip and 304s, its demo recordings and a recording given to it. Built without the viewer, it says
/// so and how to get it (and the test says it skipped the serving part).
#[test]
fn the_binary_alone_serves_its_embedded_viewer() {
    let root = temp_dir("serve-alone");
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("slotscope");
    std::fs::copy(env!("CARGO_BIN_EXE_slotscope"), &exe).unwrap();
    let work = root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    assert!(
        root.ancestors()
            .all(|d| !d.join("web/dist/index.html").exists()),
        "{} must not be below a web/dist",
        root.display()
    );

    if !embeds_viewer(&exe) {
        assert!(
            !embedded_required(),
            "SLOTSCOPE_REQUIRE_EMBEDDED: the binary must embed the viewer (scripts/build-web, then \
             a rebuild of slotscope)"
        );
        let o = Command::new(&exe)
            .args(["serve", "--no-open", "--port", "0"])
            .current_dir(&work)
            .output()
            .expect("run slotscope serve");
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        for needle in [
            "built without the viewer",
            "scripts/build-web",
            "cargo install --path collector",
            "--dist",
        ] {
            assert!(text(&o).contains(needle), "{needle}: {}", text(&o));
        }
        println!(
            "skipped serving from the lone binary: it was built without the viewer (no web/dist \
             when it was compiled; scripts/build-web, then rebuild)"
        );
        let _ = std::fs::remove_dir_all(root);
        return;
    }

    let dist = embedded_from();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/incident2-valkey.jsonl.zst");
    let recording = work.join("mine.jsonl.zst");
    std::fs::copy(&fixture, &recording).unwrap();
    let server = Server::start_binary(&exe, &work, &["mine.jsonl.zst"]);
    assert!(
        server.url.ends_with("/?src=/recording/mine.jsonl.zst"),
        "{}",
        server.url
    );
    let stderr = server.stderr();
    assert!(
        stderr.contains("serving the viewer embedded in this binary"),
        "{stderr}"
    );
    assert!(!stderr.contains("note:"), "no web/dist near: {stderr}");
    const GZIP: &str = "Accept-Encoding: gzip, deflate\r\n";

    let (status, head, body) = server.get("/");
    assert_eq!(status, 200, "{head}");
    assert!(content_type(&head).starts_with("text/html"), "{head}");
    assert_eq!(body, std::fs::read(dist.join("index.html")).unwrap());

    let wasm = std::fs::read(dist.join("slotscope_web_bg.wasm")).unwrap();
    let (status, head, body, _) = server.get_with("/slotscope_web_bg.wasm", "");
    assert_eq!(status, 200, "{head}");
    assert_eq!(content_type(&head), "application/wasm");
    assert_eq!(body, wasm, "the built wasm, byte for byte");
    let identity_etag = header(&head, "etag");
    let (status, head, body, _) = server.get_with("/slotscope_web_bg.wasm", GZIP);
    assert_eq!(status, 200, "{head}");
    assert_eq!(header(&head, "content-encoding"), "gzip", "{head}");
    assert!(body.len() < wasm.len(), "gzip makes it smaller");
    assert_eq!(gunzip(&body), wasm);
    let etag = header(&head, "etag");
    assert!(etag.starts_with('"') && etag != identity_etag, "{head}");
    let (status, head, body, _) = server.get_with(
        "/slotscope_web_bg.wasm",
        &format!("{GZIP}If-None-Match: {etag}\r\n"),
    );
    assert_eq!((status, body.len()), (304, 0), "{head}");
    let (status, _, body, _) = server.get_with(
        "/slotscope_web_bg.wasm",
        &format!("If-None-Match: {identity_etag}\r\n"),
    );
    assert_eq!((status, body.len()), (304, 0));

    let (status, head, body) = server.get("/slotscope_web.js");
    assert_eq!(status, 200, "{head}");
    assert_eq!(body, std::fs::read(dist.join("slotscope_web.js")).unwrap());

    let (status, head, body) = server.get("/demo/incident1.jsonl.zst");
    assert_eq!(status, 200, "{head}");
    assert_eq!(content_type(&head), "application/octet-stream");
    assert_eq!(
        body,
        std::fs::read(dist.join("demo/incident1.jsonl.zst")).unwrap()
    );
    let (status, head, body, _) = server.get_with("/demo/incident1.jsonl.zst", GZIP);
    assert_eq!(header(&head, "content-encoding"), "", "never gzip a .zst");
    assert_eq!(
        (status, body.len() as u64),
        (
            200,
            std::fs::metadata(dist.join("demo/incident1.jsonl.zst"))
                .unwrap()
                .len()
        )
    );

    let (status, head, body) = server.get("/whatif/slotscope_whatif_bg.wasm");
    assert_eq!(status, 200, "{head}");
    assert_eq!(&body[..4], b"\0asm");

    let (status, head, body) = server.get("/recording/mine.jsonl.zst");
    assert_eq!(status, 200, "{head}");
    assert_eq!(body, std::fs::read(&fixture).unwrap());

    std::fs::write(root.join("secret.txt"), "not for the browser").unwrap();
    for escape in [
        "/../secret.txt",
        "/%2e%2e/%2e%2e/secret.txt",
        "/demo/..%2f..%2fsecret.txt",
    ] {
        let (status, head, _) = server.get(escape);
        assert_eq!(status, 403, "{escape}: {head}");
    }
    let (status, _, _) = server.get("/no-such-file.js");
    assert_eq!(status, 404);
    drop(server);
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn a_missing_viewer_says_how_to_build_it() {
    let root = temp_dir("serve-missing");
    let o = slotscope(&[
        "serve",
        "--no-open",
        "--port",
        "0",
        "--dist",
        root.join("nothing").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("scripts/build-web"), "{}", text(&o));

    let (viewer, dist) = fake_viewer("serve-missing-file");
    let o = slotscope(&[
        "serve",
        "--no-open",
        "--port",
        "0",
        "--dist",
        dist.to_str().unwrap(),
        "/no/such/recording.jsonl",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("/no/such/recording.jsonl"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(root);
    let _ = std::fs::remove_dir_all(viewer);
}

#[test]
fn serve_help_explains_where_the_viewer_comes_from() {
    let o = slotscope(&["serve", "--help"]);
    assert!(o.status.success());
    let help = text(&o);
    for needle in [
        "--port",
        "--dist",
        "--no-open",
        "web/dist",
        "scripts/build-web",
        "127.0.0.1",
        "/recording/",
    ] {
        assert!(
            help.contains(needle),
            "serve --help lacks {needle}:\n{help}"
        );
    }
}

#[test]
fn reloads_cost_a_304_and_compressible_files_go_gzip() {
    let (root, dist) = fake_viewer("serve-cache");
    let js = dist.join("slotscope_web.js");
    let js_bytes = "export function draw(track) { return track.points.length; }\n".repeat(400);
    std::fs::write(&js, &js_bytes).unwrap();
    let (recording, server) = serve_fixture(&root, &dist);
    const GZIP: &str = "Accept-Encoding: gzip, deflate\r\n";

    // First load: gzip that decompresses to the file, with an ETag, revalidated every time.
    let (status, head, body, _) = server.get_with("/slotscope_web.js", GZIP);
    assert_eq!(status, 200, "{head}");
    assert_eq!(header(&head, "content-encoding"), "gzip", "{head}");
    assert_eq!(header(&head, "vary"), "Accept-Encoding", "{head}");
    assert_eq!(header(&head, "cache-control"), "no-cache", "{head}");
    assert_eq!(header(&head, "content-length"), body.len().to_string());
    assert!(body.len() < js_bytes.len() / 10, "{} bytes", body.len());
    assert_eq!(gunzip(&body), js_bytes.as_bytes());
    let etag = header(&head, "etag");
    assert!(
        etag.starts_with('"') && etag.ends_with('"'),
        "a strong ETag: {head}"
    );

    // Reload: 304, no body.
    let if_none_match = |tag: &str| format!("{GZIP}If-None-Match: {tag}\r\n");
    let (status, head, body, _) = server.get_with("/slotscope_web.js", &if_none_match(&etag));
    assert_eq!(status, 304, "{head}");
    assert!(body.is_empty());
    assert_eq!(header(&head, "etag"), etag);

    // Another tag: the whole file again.
    let (status, _, _, _) = server.get_with("/slotscope_web.js", &if_none_match("\"other\""));
    assert_eq!(status, 200);

    // No Accept-Encoding: the identity body, with its own ETag.
    let (status, head, body, _) = server.get_with("/slotscope_web.js", "");
    assert_eq!(status, 200, "{head}");
    assert_eq!(header(&head, "content-encoding"), "", "{head}");
    assert_eq!(body, js_bytes.as_bytes());
    let identity_etag = header(&head, "etag");
    assert!(!identity_etag.is_empty() && identity_etag != etag, "{head}");
    let (status, _, body, _) = server.get_with(
        "/slotscope_web.js",
        &format!("If-None-Match: {identity_etag}\r\n"),
    );
    assert_eq!((status, body.len()), (304, 0));

    // A changed file: a new ETag and the new bytes, never the stale ones.
    let changed = js_bytes.replace("length", "len");
    std::fs::write(&js, &changed).unwrap();
    let (status, head, body, _) = server.get_with("/slotscope_web.js", &if_none_match(&etag));
    assert_eq!(status, 200, "{head}");
    assert_ne!(header(&head, "etag"), etag);
    assert_eq!(gunzip(&body), changed.as_bytes());

    // A .zst recording is sent as it is, even to a gzip client; it revalidates too.
    let zst = std::fs::read(&recording).unwrap();
    for path in [
        "/recording/incident2-valkey.jsonl.zst",
        "/demo/incident1.jsonl.zst",
    ] {
        let (status, head, body, _) = server.get_with(path, GZIP);
        assert_eq!(status, 200, "{path}: {head}");
        assert_eq!(header(&head, "content-encoding"), "", "{path}: {head}");
        if path.starts_with("/recording/") {
            assert_eq!(body, zst);
        }
        let tag = header(&head, "etag");
        assert!(!tag.is_empty(), "{path}: {head}");
        let (status, _, body, _) = server.get_with(path, &if_none_match(&tag));
        assert_eq!((status, body.len()), (304, 0), "{path}");
    }

    // Too small to gain from gzip: identity, still with an ETag and a 304 on reload.
    let (status, head, body, _) = server.get_with("/", GZIP);
    assert_eq!(status, 200, "{head}");
    assert!(String::from_utf8_lossy(&body).contains("id=app"));
    let (status, _, _, _) = server.get_with("/", &if_none_match(&header(&head, "etag")));
    assert_eq!(status, 304);

    drop(server);
    let _ = std::fs::remove_dir_all(root);
}

/// The bytes a browser receives for the viewer's first load and for a reload (each file revalidated
/// with its ETag), measured on this checkout's `web/dist` when `scripts/build-web` has built it; the
/// figures are printed (`cargo test -p slotscope --test serve -- --nocapture`), not asserted beyond
/// "a reload is a few hundred bytes".
#[test]
fn measures_first_load_against_reload_of_the_built_viewer() {
    let dist = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/dist");
    if !dist.join("index.html").is_file() {
        println!("web/dist is not built (scripts/build-web): no figure for first load vs reload");
        return;
    }
    let dist = dist.canonicalize().unwrap();
    let server = Server::start(&dist, &["--dist", dist.to_str().unwrap()]);
    // What Chromium sends (brotli first), and a client that takes gzip only.
    const BROWSER: &str = "Accept-Encoding: gzip, deflate, br, zstd\r\n";
    const GZIP: &str = "Accept-Encoding: gzip\r\n";
    let files = ["/", "/slotscope_web.js", "/slotscope_web_bg.wasm"];
    // The server brotli-compresses the bundle on a thread of its own from its start (seconds in
    // a debug build), sending gzip meanwhile: wait until the wasm comes back brotli.
    let began = std::time::Instant::now();
    let brotli_ready = loop {
        let (_, head, _, _) = server.get_with("/slotscope_web_bg.wasm", BROWSER);
        if header(&head, "content-encoding") == "br" {
            break began.elapsed();
        }
        assert!(
            began.elapsed() < std::time::Duration::from_secs(120),
            "no brotli body after 120 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    };
    let (mut identity, mut gzip, mut first, mut reload) = (0, 0, 0, 0);
    for path in files {
        let (status, _, _, plain) = server.get_with(path, "");
        assert_eq!(status, 200, "{path}");
        identity += plain;
        let (status, head, _, got) = server.get_with(path, GZIP);
        assert_eq!(status, 200, "{path}");
        assert_eq!(header(&head, "content-encoding"), "gzip", "{path}");
        gzip += got;
        let (status, head, _, got) = server.get_with(path, BROWSER);
        assert_eq!(status, 200, "{path}");
        if path.ends_with(".wasm") {
            assert_eq!(header(&head, "content-encoding"), "br", "{path}");
        }
        first += got;
        let tag = header(&head, "etag");
        let (status, _, body, again) =
            server.get_with(path, &format!("{BROWSER}If-None-Match: {tag}\r\n"));
        assert_eq!((status, body.len()), (304, 0), "{path}");
        reload += again;
    }
    println!(
        "viewer index.html + js + wasm, bytes received (headers included): without compression \
         {identity}, gzip {gzip}, first load as Chromium asks (brotli) {first}, reload (304s) {reload}; \
         the brotli wasm was ready {brotli_ready:?} after the first request"
    );
    assert!(first < gzip, "brotli {first} against gzip {gzip}");
    assert!(reload < 1000, "a reload costs {reload} bytes");
    drop(server);
}

/// Resident memory of process `pid`, in KiB (Linux `/proc`).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS")
}

/// What a connection receives within `wait`: the status of a response, or `None` when it was
/// closed without one, or `Some(0)` when nothing came.
fn status_within(s: &mut TcpStream, wait: Duration) -> Option<u16> {
    s.set_read_timeout(Some(wait)).unwrap();
    let mut buf = [0u8; 512];
    match s.read(&mut buf) {
        Ok(0) => None,
        Ok(n) => String::from_utf8_lossy(&buf[..n])
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok()),
        Err(_) => Some(0),
    }
}

/// The limits of issue 27, measured: a 200 KiB head is refused with 431; 300 slow-loris clients
/// each holding a 48 KiB unfinished head take at most the server's 256 places, the others are
/// answered 503 at once, the server's memory grows by a bounded amount; hyper drops every slow one
/// after its 20 s head timeout, and the server answers normally again.
#[test]
fn slow_oversized_and_too_many_clients_cost_a_bounded_amount_and_the_server_recovers() {
    let (root, dist) = fake_viewer("serve-limits");
    let (_, server) = serve_fixture(&root, &dist);
    let pid = server.child.id();
    assert_eq!(server.get("/").0, 200);
    let before = rss_kib(pid);

    let mut big = TcpStream::connect(server.authority()).unwrap();
    big.set_write_timeout(Some(STEP)).unwrap();
    let _ = write!(
        big,
        "GET / HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(200 * 1024)
    );
    // hyper's own limit (about 400 KiB) would let 200 KiB through.
    assert_eq!(
        status_within(&mut big, STEP),
        Some(431),
        "an oversized head"
    );
    drop(big);

    let started = Instant::now();
    let filler = format!("X-Slow: {}\r\n", "b".repeat(1000));
    let mut slow = Vec::new();
    for _ in 0..300 {
        let mut s = TcpStream::connect(server.authority()).unwrap();
        s.set_write_timeout(Some(STEP)).unwrap();
        // An unfinished head: 48 lines of a kilobyte, never the empty line that ends it.
        let _ = write!(s, "GET / HTTP/1.1\r\nHost: x\r\n");
        for _ in 0..48 {
            let _ = s.write_all(filler.as_bytes());
        }
        slow.push(s);
    }
    // Each connection as it stands half a second on: answered, or held open without a word.
    std::thread::sleep(Duration::from_millis(500));
    let mut refused = 0;
    let mut held = 0;
    for s in &mut slow {
        s.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 512];
        match s.read(&mut buf) {
            Ok(n) if n > 0 && buf.starts_with(b"HTTP/1.1 503") => refused += 1,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => held += 1,
            other => panic!("a slow client got {other:?}"),
        }
        s.set_nonblocking(false).unwrap();
    }
    let during = rss_kib(pid);
    eprintln!(
        "300 slow clients with 48 KiB heads: {held} held, {refused} answered 503; resident memory {} KiB before, {} KiB with them (+{} KiB)",
        before,
        during,
        during.saturating_sub(before)
    );
    assert_eq!(held, 256, "the server holds its 256 places");
    assert_eq!(refused, 44);
    assert!(
        during.saturating_sub(before) < 48 * 1024,
        "{} KiB more with the slow clients",
        during.saturating_sub(before)
    );
    // hyper drops each slow client 20 s after its connection began.
    let mut dropped = 0;
    for s in &mut slow {
        let left = (Duration::from_secs(30)).saturating_sub(started.elapsed());
        if status_within(s, left.max(Duration::from_millis(100))).is_none_or(|c| c == 408) {
            dropped += 1;
        }
    }
    eprintln!(
        "{dropped} slow clients dropped by the server {:.1} s after they began",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(dropped, 256 + 44);
    assert!(started.elapsed() >= Duration::from_secs(19));
    drop(slow);
    assert_eq!(server.get("/").0, 200, "answers again once they are gone");
}
