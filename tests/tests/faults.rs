//! Faults survived while recording (issue 27, part 3), on real clusters: one node partitioned
//! away, silent, answering half a reply then closing, slow, its password rotated, or crowded with
//! 5,000 connections, while `slotscope record` polls the cluster (`slotscope_tests::fault`). For
//! each: the other nodes keep their interval, no round overruns, the fault is recorded as what it
//! is, the recorder's memory stays bounded, and the node's samples resume by themselves once the
//! fault ends. One at a time: the timings are judged on a two-core machine.

use std::sync::{Mutex, MutexGuard};

use slotscope_tests::fault::inject::inject;
use slotscope_tests::fault::Fault;
use slotscope_tests::ServerKind;

fn exclusive() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn survives(fault: Fault, kind: ServerKind) {
    let _one = exclusive();
    let o = inject(fault, kind).unwrap_or_else(|e| panic!("{fault} ({kind:?}): {e}"));
    eprintln!(
        "{fault} ({kind:?}): {} rounds, longest {} ms; healthy nodes' longest gap {} ms; the node's failures {:?}; its samples back {:?} ms after; recorder {} KiB, at most {}, at the end {}; most clients {}",
        o.rounds,
        o.longest_round_ms,
        o.healthy_gap_ms,
        o.failures,
        o.recovered_after_ms,
        o.rss_kib.0,
        o.rss_kib.1,
        o.rss_kib.2,
        o.most_clients
    );
    assert!(
        o.problems.is_empty(),
        "{fault} ({kind:?}): {:#?}",
        o.problems
    );
}

#[test]
fn a_partitioned_node_is_recorded_as_timeouts_and_the_others_keep_their_interval() {
    survives(Fault::Partition, ServerKind::Redis);
}

#[test]
fn a_silent_node_is_recorded_as_timeouts_and_the_others_keep_their_interval() {
    survives(Fault::Silent, ServerKind::Valkey);
}

#[test]
fn a_node_that_answers_half_and_closes_is_recorded_as_lost_connections() {
    survives(Fault::HalfThenClose, ServerKind::Redis);
}

#[test]
fn a_slow_node_is_recorded_as_timeouts_and_the_others_keep_their_interval() {
    survives(Fault::Slow, ServerKind::Valkey);
}

#[test]
fn a_rotated_password_is_recorded_as_refused_logins_until_it_is_back() {
    survives(Fault::PasswordRotated, ServerKind::Redis);
}

#[test]
fn a_node_with_5000_connections_is_recorded_and_costs_the_others_nothing() {
    survives(Fault::ManyConnections, ServerKind::Valkey);
}

#[test]
fn an_expired_certificate_is_recorded_as_refused_handshakes_until_it_is_replaced() {
    survives(Fault::TlsExpired, ServerKind::Redis);
}

#[test]
fn a_certificate_for_another_host_is_recorded_as_refused_handshakes_until_it_is_replaced() {
    survives(Fault::TlsWrongHost, ServerKind::Redis);
}
