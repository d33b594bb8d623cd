//! Any [`Fault`], run the way it needs: on a TLS cluster ([`tls`]) or through the proxy ([`run`]).

use crate::fault::run::{self, FaultOutcome};
use crate::fault::{tls, Fault};
use crate::kind::ServerKind;

/// Records through `fault` on a cluster of `kind` (a TLS fault: always Redis, whose embedded
/// Valkey build has no TLS) and judges the recording.
pub fn inject(fault: Fault, kind: ServerKind) -> Result<FaultOutcome, String> {
    if fault.is_tls() {
        tls::run(fault)
    } else {
        run::run(fault, kind)
    }
}
