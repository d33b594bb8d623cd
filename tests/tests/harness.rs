//! The harness itself, against real Redis and Valkey servers: clusters come up, slots migrate
//! with keys under load, masters join, passwords and ACL users apply, nodes pause and die.

use std::time::Duration;

use slotscope_core::resp::Value;
use slotscope_core::{Slot, SlotRange};
use slotscope_tests::topology::info_field;
use slotscope_tests::{Client, Cluster, ClusterOptions, Load, LoadOptions, Router, ServerKind};

fn range(a: u16, b: u16) -> SlotRange {
    SlotRange::try_from((a, b)).unwrap()
}

/// Writes `count` keys `<prefix><n>` whose slots lie in `slots`, returning `(key, value)` pairs.
fn preload(
    router: &mut Router,
    prefix: &str,
    slots: SlotRange,
    count: usize,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut n = 0u64;
    while out.len() < count {
        let key = format!("{prefix}{n}");
        n += 1;
        if !slots.contains(Slot::for_key(key.as_bytes())) {
            continue;
        }
        let value = format!("pre{n}");
        let r = router.cmd(&["SET", key.as_str(), value.as_str()]).unwrap();
        assert_eq!(r.value, Value::Simple("OK".into()), "SET {key}");
        out.push((key, value));
    }
    out
}

/// Every pair is readable through a fresh router with its value.
fn assert_readable(cluster: &Cluster, pairs: &[(String, String)]) {
    let mut router = cluster.router();
    for (k, v) in pairs {
        let r = router.cmd(&["GET", k.as_str()]).unwrap();
        assert_eq!(r.value, Value::Bulk(v.clone().into_bytes()), "GET {k}");
    }
}

/// Every running node reports `slots` served by node `owner`.
fn assert_owner(cluster: &Cluster, slots: SlotRange, owner: usize) {
    for i in 0..cluster.len() {
        for s in [slots.start(), slots.end()] {
            assert_eq!(
                cluster.owner_seen_by(i, s),
                Some(owner),
                "{}: node {i} on the owner of slot {s}",
                cluster.kind()
            );
        }
        let seen = cluster.slots_seen_by(i);
        let covering: Vec<_> = seen
            .iter()
            .filter(|o| o.range.contains(slots.start()) || o.range.contains(slots.end()))
            .collect();
        assert!(covering.iter().all(|o| o.addr == cluster.addr(owner)));
    }
}

fn three_masters_come_up(kind: ServerKind) {
    let cluster = Cluster::start(kind, 3, ClusterOptions::default());
    assert_eq!(cluster.len(), 3);
    for i in 0..3 {
        let mut c = cluster.client(i);
        let info = c.cmd_text(&["CLUSTER", "INFO"]).unwrap();
        assert_eq!(info_field(&info, "cluster_state"), Some("ok"));
        assert_eq!(info_field(&info, "cluster_known_nodes"), Some("3"));
        assert_eq!(info_field(&info, "cluster_size"), Some("3"));
        assert_eq!(info_field(&info, "cluster_slots_assigned"), Some("16384"));
        let slots = cluster.slots_seen_by(i);
        let ranges: Vec<(u16, u16)> = slots.iter().map(|o| o.range.into()).collect();
        assert_eq!(ranges, vec![(0, 5460), (5461, 10921), (10922, 16383)]);
        for (m, o) in slots.iter().enumerate() {
            assert_eq!(o.id, cluster.node_id(m));
            assert_eq!(o.addr, cluster.addr(m));
        }
    }
    let server = kind.version();
    assert!(server.to_lowercase().contains(kind.name()), "{server}");
}

#[test]
fn redis_three_masters_come_up() {
    three_masters_come_up(ServerKind::Redis);
}

#[test]
fn valkey_three_masters_come_up() {
    three_masters_come_up(ServerKind::Valkey);
}

fn migration_under_load(kind: ServerKind) {
    let cluster = Cluster::start(kind, 3, ClusterOptions::default());
    let moving = range(0, 99);
    let mut router = cluster.router();
    let pre = preload(&mut router, "pre:", moving, 300);
    let elsewhere = preload(&mut router, "other:", range(100, 16383), 100);

    let load = Load::start(
        &cluster,
        LoadOptions {
            slots: Some(moving),
            max_ops: 200_000,
            max_duration: Duration::from_secs(15),
            ..LoadOptions::default()
        },
    );
    // Let the writer get going, then stretch the migration over about a second, each tenth slot
    // held open for 100 ms.
    std::thread::sleep(Duration::from_millis(200));
    cluster.migrate_slots_paced(moving, 0, 1, 10, Duration::from_millis(100));
    std::thread::sleep(Duration::from_millis(200));
    let report = load.stop();
    cluster.wait_converged();

    assert_eq!(
        report.errors, 0,
        "{kind}: load errors: {:?}",
        report.error_samples
    );
    assert!(report.ok > 100, "{kind}: only {} writes", report.ok);
    eprintln!(
        "{kind}: load wrote {} keys in {:?} ({} MOVED, {} ASK)",
        report.ok, report.elapsed, report.moved, report.ask
    );
    assert!(report.moved > 0, "{kind}: the writer never saw MOVED");
    assert!(report.ask > 0, "{kind}: the writer never saw ASK");
    assert_owner(&cluster, moving, 1);
    assert_owner(&cluster, range(100, 5460), 0);
    assert_readable(&cluster, &pre);
    assert_readable(&cluster, &elsewhere);
    assert_readable(&cluster, &report.written);
    let mut c0 = cluster.client(0);
    let left = c0.cmd_ok(&["CLUSTER", "COUNTKEYSINSLOT", "0"]).unwrap();
    assert_eq!(left, Value::Integer(0));
}

#[test]
fn redis_migration_under_load() {
    migration_under_load(ServerKind::Redis);
}

#[test]
fn valkey_migration_under_load() {
    migration_under_load(ServerKind::Valkey);
}

fn add_master_and_migrate_to_it(kind: ServerKind) {
    let mut cluster = Cluster::start(kind, 3, ClusterOptions::default());
    let moving = range(5461, 5560);
    let mut router = cluster.router();
    let pre = preload(&mut router, "k", moving, 200);
    let new = cluster.add_master();
    assert_eq!(new, 3);
    assert!(cluster
        .slots_seen_by(new)
        .iter()
        .all(|o| o.id != cluster.node_id(new)));
    cluster.migrate_slots(moving, 1, new);
    cluster.wait_converged();
    assert_owner(&cluster, moving, new);
    assert_readable(&cluster, &pre);
    let mut c = cluster.client(new);
    let n = c.cmd_ok(&["DBSIZE"]).unwrap().as_int().unwrap();
    assert_eq!(n, 200);
}

#[test]
fn redis_add_master_and_migrate_to_it() {
    add_master_and_migrate_to_it(ServerKind::Redis);
}

#[test]
fn valkey_add_master_and_migrate_to_it() {
    add_master_and_migrate_to_it(ServerKind::Valkey);
}

const ACL_USER: &str = "slotscope on >scope-secret ~* &* -@all +ping +info +cluster|info \
                        +cluster|nodes +cluster|slots +cluster|myid";

fn password_cluster(kind: ServerKind) {
    let opts = ClusterOptions {
        password: Some("s3cret pass".into()),
        acl_users: vec![ACL_USER.into()],
        replicas_per_master: 1,
    };
    let cluster = Cluster::start(kind, 3, opts);
    assert_eq!(cluster.len(), 6);
    assert_eq!(cluster.masters(), vec![0, 1, 2]);

    // Without AUTH the server refuses.
    let mut anon = Client::connect(&cluster.addr(0)).unwrap();
    let reply = anon.cmd(&["PING"]).unwrap();
    assert!(
        reply.as_error().is_some_and(|e| e.starts_with("NOAUTH")),
        "{kind}: {reply:?}"
    );
    assert!(anon.auth("default", "wrong").is_err());

    // The restricted user sees the cluster and can do nothing else.
    let mut user = Client::connect(&cluster.addr(0)).unwrap();
    user.auth("slotscope", "scope-secret").unwrap();
    assert_eq!(user.cmd(&["PING"]).unwrap(), Value::Simple("PONG".into()));
    user.cmd_ok(&["CLUSTER", "SLOTS"]).unwrap();
    user.cmd_ok(&["CLUSTER", "NODES"]).unwrap();
    user.cmd_ok(&["INFO", "replication"]).unwrap();
    let denied = user.cmd(&["SET", "x", "1"]).unwrap();
    assert!(
        denied.as_error().is_some_and(|e| e.starts_with("NOPERM")),
        "{kind}: {denied:?}"
    );
    let denied = user.cmd(&["CLUSTER", "SETSLOT", "0", "STABLE"]).unwrap();
    assert!(
        denied.as_error().is_some_and(|e| e.starts_with("NOPERM")),
        "{kind}: {denied:?}"
    );

    // The harness authenticates everywhere: replicas synced, migration with MIGRATE … AUTH.
    for m in cluster.masters() {
        let replicas = cluster.replicas_of(m);
        assert_eq!(replicas.len(), 1);
        let seen = cluster.slots_seen_by(replicas[0]);
        let mine: Vec<_> = seen.iter().filter(|o| o.id == cluster.node_id(m)).collect();
        assert!(
            mine.iter()
                .all(|o| o.replicas == vec![cluster.addr(replicas[0])]),
            "{kind}: master {m}, replica {}: {seen:?}",
            replicas[0]
        );
    }
    let mut router = cluster.router();
    let moving = range(10922, 10961);
    let pre = preload(&mut router, "p", moving, 100);
    cluster.migrate_slots(moving, 2, 0);
    cluster.wait_converged();
    assert_owner(&cluster, moving, 0);
    assert_readable(&cluster, &pre);
}

#[test]
fn redis_password_cluster() {
    password_cluster(ServerKind::Redis);
}

#[test]
fn valkey_password_cluster() {
    password_cluster(ServerKind::Valkey);
}

fn pause_resume_kill(kind: ServerKind) {
    let mut cluster = Cluster::start(kind, 3, ClusterOptions::default());
    cluster.pause(2);
    let mut c = Client::connect_timeout(&cluster.addr(2), Duration::from_millis(300)).unwrap();
    let err = c.cmd(&["PING"]).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "{kind}: {err}"
    );
    cluster.resume(2);
    let mut c = cluster.client(2);
    assert_eq!(c.cmd(&["PING"]).unwrap(), Value::Simple("PONG".into()));
    cluster.wait_converged();
    let pid = cluster.node(2).pid();
    cluster.kill(2);
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    assert!(Client::connect(&cluster.addr(2)).is_err());
    assert_eq!(cluster.seed(), cluster.addr(0));
}

#[test]
fn redis_pause_resume_kill() {
    pause_resume_kill(ServerKind::Redis);
}

#[test]
fn valkey_pause_resume_kill() {
    pause_resume_kill(ServerKind::Valkey);
}
