//! A TLS fault while recording: a 3-master Redis 7.0 cluster with TLS client ports and a TLS bus
//! ([`TlsCluster`]), recorded with `--tls --cacert`; its third node's certificate is replaced at
//! run time (`CONFIG SET tls-cert-file`, which Redis reloads) by an expired one or one for another
//! host, and its client connections closed so that the recorder must shake hands again; then the
//! good certificate is put back. The bus's links, open already, stay up.

use crate::collector::Recorder;
use crate::fault::run::{judge, now, recover, watch, FaultOutcome, PHASE};
use crate::fault::Fault;
use crate::memory::rss_kib;
use crate::tls_cluster::{Bus, TlsCluster};

/// Records through `fault` (a TLS one) and judges the recording.
pub fn run(fault: Fault) -> Result<FaultOutcome, String> {
    let cluster = TlsCluster::start(3, Bus::Tls);
    let bad = match fault {
        Fault::TlsExpired => cluster.pki.expired.clone(),
        Fault::TlsWrongHost => cluster.pki.wrong_host.clone(),
        other => return Err(format!("{other} is not a TLS fault")),
    };
    let good = cluster.pki.cert.display().to_string();
    let dir = tempfile::TempDir::new().map_err(|e| e.to_string())?;
    let out = dir.path().join("fault.jsonl");
    let seed = cluster.tls_addr(0).to_string();
    let ca = cluster.ca();
    let rec = Recorder::start(
        &out,
        &[
            "--seed",
            &seed,
            "--tls",
            "--cacert",
            &ca,
            "--interval",
            "500ms",
            "--timeout",
            "300ms",
            "--quiet",
        ],
        &[],
    );
    let pid = rec.pid();
    watch(pid, PHASE);
    let rss_before = rss_kib(pid);
    let start = now();
    cluster.run(
        2,
        &["CONFIG", "SET", "tls-cert-file", &bad.display().to_string()],
    );
    // The recorder's connection is past its handshake: it must make a new one.
    cluster.run(2, &["CLIENT", "KILL", "TYPE", "normal"]);
    let rss_most = watch(pid, PHASE);
    let end = now();
    cluster.run(2, &["CONFIG", "SET", "tls-cert-file", &good]);
    let (recording, mut outcome) = recover(rec, &out, rss_before, rss_most);
    let faulty = cluster.tls_addr(2);
    judge(&recording, fault, &faulty, start, end, &mut outcome);
    // Recorded as what it is: the handshake's step, and the certificate's fault in its words.
    let said = match fault {
        Fault::TlsExpired => "expired",
        _ => "notvalidforname",
    };
    let named = recording.lines.iter().any(|l| match l {
        slotscope_core::recording::Line::PollFailed(f) => {
            f.node.addr == faulty
                && f.step == "tls"
                && f.error.to_lowercase().replace(' ', "").contains(said)
        }
        _ => false,
    });
    if !named {
        outcome
            .problems
            .push(format!("no failure of step tls whose error says {said:?}"));
    }
    Ok(outcome)
}
