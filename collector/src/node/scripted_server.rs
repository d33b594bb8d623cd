//! Tests only: a server on 127.0.0.1 that answers every command from a script and remembers what
//! it received, for the tests of polling and recording.

use std::sync::{Arc, Mutex};

use slotscope_core::resp;
use slotscope_core::NodeAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The id of the node the scripts answer as.
pub const MYID: &str = "e0ec0cbf0c2d2a3a4b5c6d7e8f9000112233aabb";

/// What an old server (no `CLUSTER SHARDS`, no multi-section `INFO`) answers.
pub fn old_server_reply(argv: &[Vec<u8>]) -> Vec<u8> {
    let words: Vec<String> = argv
        .iter()
        .map(|w| String::from_utf8_lossy(w).to_ascii_uppercase())
        .collect();
    let bulk = |s: &str| format!("${}\r\n{s}\r\n", s.len()).into_bytes();
    match words.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["CLUSTER", "SHARDS"] => {
            b"-ERR unknown subcommand 'SHARDS'. Try CLUSTER HELP.\r\n".to_vec()
        }
        ["CLUSTER", "SLOTS"] => format!(
            "*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n$0\r\n\r\n:7000\r\n${}\r\n{MYID}\r\n",
            MYID.len()
        )
        .into_bytes(),
        ["CLUSTER", "NODES"] => bulk(&format!(
            "{MYID} :7000@17000 myself,master - 0 0 1 connected 0-16383\n"
        )),
        ["CLUSTER", "INFO"] => bulk("cluster_state:ok\r\ncluster_slots_ok:16384\r\n"),
        ["INFO", "EVERYTHING"] => bulk(
            "# Server\r\nredis_version:6.0.9\r\n\r\n# Commandstats\r\ncmdstat_get:calls=3,usec=9,usec_per_call=3.00\r\n",
        ),
        ["INFO", ..] => b"-ERR syntax error\r\n".to_vec(),
        ["CLIENT", "LIST"] => bulk("id=7 addr=127.0.0.1:5000 fd=8 name= age=9 idle=0 cmd=get\n"),
        _ => b"-ERR unexpected command\r\n".to_vec(),
    }
}

/// Every command received, as its arguments, in order.
pub type Log = Arc<Mutex<Vec<Vec<Vec<u8>>>>>;

/// A server on 127.0.0.1 answering from a script, remembering every command it received. Accepts
/// a handful of connections (a poller reconnects, a recorder polls the seed twice).
pub async fn scripted_server(reply: fn(&[Vec<u8>]) -> Vec<u8>) -> (NodeAddr, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Log = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        // Bounded: a test opens a handful of connections.
        for _ in 0..16 {
            let Ok((sock, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(serve(sock, reply, log.clone()));
        }
    });
    (NodeAddr::new("127.0.0.1", port).unwrap(), seen)
}

/// Answers one connection from the script until it closes.
async fn serve(mut sock: TcpStream, reply: fn(&[Vec<u8>]) -> Vec<u8>, log: Log) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    // Bounded: a test sends at most a few hundred pipelines, then drops the connection.
    for _ in 0..1000 {
        let n = match sock.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        while let Ok(Some((value, used))) = resp::parse(&buf) {
            buf.drain(..used);
            let argv: Vec<Vec<u8>> = value
                .as_array()
                .unwrap_or_default()
                .iter()
                .filter_map(|v| match v {
                    resp::Value::Bulk(b) => Some(b.clone()),
                    _ => None,
                })
                .collect();
            let out = reply(&argv);
            log.lock().unwrap().push(argv);
            if sock.write_all(&out).await.is_err() {
                return;
            }
        }
    }
}
