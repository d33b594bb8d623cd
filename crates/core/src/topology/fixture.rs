//! Replies recorded from Redis 7.0.15 and Valkey 8.1.8 clusters, and helpers, shared by the unit
//! tests of the topology parsers and of [`TopologyView`].

use super::TopologyView;
use crate::node::{NodeAddr, NodeId};
use crate::resp::{parse, Value};
use crate::slot::{Slot, SlotRange};

/// Node ids of the Redis (`R`) and Valkey (`V`) fixture clusters.
pub(super) const R1: &str = "6901d2f27ca20a78dff17f496b958368683aab1e"; // Redis 21001
pub(super) const R2: &str = "54af685f18c0ef0d0a26240a6be0c01d5795e658"; // Redis 21002
pub(super) const R3: &str = "e45852feb38a885187a341f6515b7bc739776c37"; // Redis 21003
pub(super) const R4: &str = "5019d6f94c79616dc8c3a4729d1b1dd7af86a335"; // Redis 21004, replica of R1
pub(super) const R6: &str = "5da04f504145c92d300c302f9d4dd5f5dc385436"; // Redis 21006, no slots
pub(super) const V1: &str = "09bd939c8b386c78006c0b0968e7f54ae3e27d19"; // Valkey 21011
pub(super) const V2: &str = "acbf5459808accdca33575614a0d83a9136b57aa"; // Valkey 21012
pub(super) const V3: &str = "af6a8ab7d493b523956680fea37528075a5e90c7"; // Valkey 21013
pub(super) const V4: &str = "8116309cf79874effb86ba5414418b74e084852c"; // Valkey 21014, replica of V1
pub(super) const V6: &str = "0e7bf0bc0f2eb5254abbf5e3b74bf2645c799ce1"; // Valkey 21016, no slots

/// Redis 7.0.15, `CLUSTER SHARDS` (RESP2) at 127.0.0.1:21001: three shards plus a
/// slotless primary (21006); 21002 announces hostname node2.example.
pub(super) const REDIS_SHARDS_RESP2: &[u8] = b"\
*4\r\n*4\r\n$5\r\nslots\r\n*2\r\n:10923\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\n\
id\r\n$40\r\ne45852feb38a885187a341f6515b7bc739776c37\r\n$4\r\nport\r\n:21003\r\n$2\r\n\
ip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
$18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*4\r\n$5\r\nslots\r\n\
*0\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\nid\r\n$40\r\n\
5da04f504145c92d300c302f9d4dd5f5dc385436\r\n$4\r\nport\r\n:21006\r\n$2\r\nip\r\n$9\r\n\
127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\n\
replication-offset\r\n:14\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*4\r\n$5\r\nslots\r\n*2\r\n\
:5461\r\n:10922\r\n$5\r\nnodes\r\n*1\r\n*16\r\n$2\r\nid\r\n$40\r\n\
54af685f18c0ef0d0a26240a6be0c01d5795e658\r\n$4\r\nport\r\n:21002\r\n$2\r\nip\r\n$9\r\n\
127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$8\r\nhostname\r\n$13\r\nnode2.example\r\n\
$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$6\r\n\
online\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:5460\r\n$5\r\nnodes\r\n*2\r\n*14\r\n$2\r\nid\r\n\
$40\r\n6901d2f27ca20a78dff17f496b958368683aab1e\r\n$4\r\nport\r\n:21001\r\n$2\r\nip\r\n\
$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
$18\r\nreplication-offset\r\n:70\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*14\r\n$2\r\nid\r\n\
$40\r\n5019d6f94c79616dc8c3a4729d1b1dd7af86a335\r\n$4\r\nport\r\n:21004\r\n$2\r\nip\r\n\
$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$7\r\nreplica\r\n\
$18\r\nreplication-offset\r\n:70\r\n$6\r\nhealth\r\n$6\r\nonline\r\n";

/// Redis 7.0.15, `CLUSTER SLOTS` (RESP2) at 127.0.0.1:21001, same moment as REDIS_SHARDS_RESP2.
pub(super) const REDIS_SLOTS_RESP2: &[u8] = b"\
*3\r\n*4\r\n:0\r\n:5460\r\n*4\r\n$9\r\n127.0.0.1\r\n:21001\r\n$40\r\n\
6901d2f27ca20a78dff17f496b958368683aab1e\r\n*0\r\n*4\r\n$9\r\n127.0.0.1\r\n:21004\r\n$40\r\n\
5019d6f94c79616dc8c3a4729d1b1dd7af86a335\r\n*0\r\n*3\r\n:5461\r\n:10922\r\n*4\r\n$9\r\n\
127.0.0.1\r\n:21002\r\n$40\r\n54af685f18c0ef0d0a26240a6be0c01d5795e658\r\n*2\r\n$8\r\n\
hostname\r\n$13\r\nnode2.example\r\n*3\r\n:10923\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n\
:21003\r\n$40\r\ne45852feb38a885187a341f6515b7bc739776c37\r\n*0\r\n";

/// Valkey 8.1.8, `CLUSTER SHARDS` (RESP2) at 127.0.0.1:21011, same layout as the Redis cluster.
pub(super) const VALKEY_SHARDS_RESP2: &[u8] = b"\
*4\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:5460\r\n$5\r\nnodes\r\n*2\r\n*14\r\n$2\r\nid\r\n\
$40\r\n09bd939c8b386c78006c0b0968e7f54ae3e27d19\r\n$4\r\nport\r\n:21011\r\n$2\r\nip\r\n\
$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
$18\r\nreplication-offset\r\n:70\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*14\r\n$2\r\nid\r\n\
$40\r\n8116309cf79874effb86ba5414418b74e084852c\r\n$4\r\nport\r\n:21014\r\n$2\r\nip\r\n\
$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$7\r\nreplica\r\n\
$18\r\nreplication-offset\r\n:70\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*4\r\n$5\r\nslots\r\n\
*0\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\nid\r\n$40\r\n\
0e7bf0bc0f2eb5254abbf5e3b74bf2645c799ce1\r\n$4\r\nport\r\n:21016\r\n$2\r\nip\r\n$9\r\n\
127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\n\
replication-offset\r\n:14\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*4\r\n$5\r\nslots\r\n*2\r\n\
:5461\r\n:10922\r\n$5\r\nnodes\r\n*1\r\n*16\r\n$2\r\nid\r\n$40\r\n\
acbf5459808accdca33575614a0d83a9136b57aa\r\n$4\r\nport\r\n:21012\r\n$2\r\nip\r\n$9\r\n\
127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$8\r\nhostname\r\n$13\r\nnode2.example\r\n\
$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$6\r\n\
online\r\n*4\r\n$5\r\nslots\r\n*2\r\n:10923\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\n\
id\r\n$40\r\naf6a8ab7d493b523956680fea37528075a5e90c7\r\n$4\r\nport\r\n:21013\r\n$2\r\n\
ip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
$18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$6\r\nonline\r\n";

/// Valkey 8.1.8, `HELLO 3` then `CLUSTER SHARDS` at 127.0.0.1:21011, right after
/// VALKEY_SHARDS_RESP2
/// (the replication offsets differ).
pub(super) const VALKEY_SHARDS_RESP3: &[u8] = b"\
*4\r\n%2\r\n$5\r\nslots\r\n*2\r\n:0\r\n:5460\r\n$5\r\nnodes\r\n*2\r\n%7\r\n$2\r\nid\r\n\
$40\r\n09bd939c8b386c78006c0b0968e7f54ae3e27d19\r\n$4\r\nport\r\n:21011\r\n$2\r\nip\r\n\
$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
$18\r\nreplication-offset\r\n:70\r\n$6\r\nhealth\r\n$6\r\nonline\r\n%7\r\n$2\r\nid\r\n\
$40\r\n8116309cf79874effb86ba5414418b74e084852c\r\n$4\r\nport\r\n:21014\r\n$2\r\nip\r\n\
$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$7\r\nreplica\r\n\
$18\r\nreplication-offset\r\n:70\r\n$6\r\nhealth\r\n$6\r\nonline\r\n%2\r\n$5\r\nslots\r\n\
*0\r\n$5\r\nnodes\r\n*1\r\n%7\r\n$2\r\nid\r\n$40\r\n\
0e7bf0bc0f2eb5254abbf5e3b74bf2645c799ce1\r\n$4\r\nport\r\n:21016\r\n$2\r\nip\r\n$9\r\n\
127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\n\
replication-offset\r\n:14\r\n$6\r\nhealth\r\n$6\r\nonline\r\n%2\r\n$5\r\nslots\r\n*2\r\n\
:5461\r\n:10922\r\n$5\r\nnodes\r\n*1\r\n%8\r\n$2\r\nid\r\n$40\r\n\
acbf5459808accdca33575614a0d83a9136b57aa\r\n$4\r\nport\r\n:21012\r\n$2\r\nip\r\n$9\r\n\
127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$8\r\nhostname\r\n$13\r\nnode2.example\r\n\
$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$6\r\n\
online\r\n%2\r\n$5\r\nslots\r\n*2\r\n:10923\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n%7\r\n$2\r\n\
id\r\n$40\r\naf6a8ab7d493b523956680fea37528075a5e90c7\r\n$4\r\nport\r\n:21013\r\n$2\r\n\
ip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
$18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$6\r\nonline\r\n";

/// Valkey 8.1.8, `HELLO 3` then `CLUSTER SLOTS` at 127.0.0.1:21011 (metadata as maps).
pub(super) const VALKEY_SLOTS_RESP3: &[u8] = b"\
*3\r\n*4\r\n:0\r\n:5460\r\n*4\r\n$9\r\n127.0.0.1\r\n:21011\r\n$40\r\n\
09bd939c8b386c78006c0b0968e7f54ae3e27d19\r\n%0\r\n*4\r\n$9\r\n127.0.0.1\r\n:21014\r\n$40\r\n\
8116309cf79874effb86ba5414418b74e084852c\r\n%0\r\n*3\r\n:5461\r\n:10922\r\n*4\r\n$9\r\n\
127.0.0.1\r\n:21012\r\n$40\r\nacbf5459808accdca33575614a0d83a9136b57aa\r\n%1\r\n$8\r\n\
hostname\r\n$13\r\nnode2.example\r\n*3\r\n:10923\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n\
:21013\r\n$40\r\naf6a8ab7d493b523956680fea37528075a5e90c7\r\n%0\r\n";

/// Redis 7.0.15, `CLUSTER SHARDS` of a node alone in its cluster (127.0.0.1:21005, slots 0-99):
/// it does not know its own IP yet, so `ip` and `endpoint` are empty.
pub(super) const REDIS_LONE_SHARDS: &[u8] = b"\
*1\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:99\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\nid\r\n\
$40\r\n4cf999639a7f9fc8e0271c1ebc9649e079888e9b\r\n$4\r\nport\r\n:21005\r\n$2\r\nip\r\n\
$0\r\n\r\n$8\r\nendpoint\r\n$0\r\n\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\n\
replication-offset\r\n:14\r\n$6\r\nhealth\r\n$6\r\nonline\r\n";

/// Valkey 8.1.8, `CLUSTER SLOTS` of a lone node (127.0.0.1:21015): empty IP.
pub(super) const VALKEY_LONE_SLOTS: &[u8] = b"\
*1\r\n*3\r\n:0\r\n:99\r\n*4\r\n$0\r\n\r\n:21015\r\n$40\r\n\
b28509c801e9de1686b46bd627d1b415cbc02388\r\n*0\r\n";

/// Redis 7.0.15, `CLUSTER SHARDS` at 127.0.0.1:21001 after 21003 (slots 10923-16383) was killed.
pub(super) const REDIS_SHARDS_FAILED: &[u8] = b"\
*4\r\n*4\r\n$5\r\nslots\r\n*2\r\n:10923\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\n\
id\r\n$40\r\ne45852feb38a885187a341f6515b7bc739776c37\r\n$4\r\nport\r\n:21003\r\n$2\r\n\
ip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n\
$18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$4\r\nfail\r\n*4\r\n$5\r\nslots\r\n*0\r\n\
$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\nid\r\n$40\r\n5da04f504145c92d300c302f9d4dd5f5dc385436\r\n\
$4\r\nport\r\n:21006\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n\
$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:14\r\n$6\r\nhealth\r\n$6\r\n\
online\r\n*4\r\n$5\r\nslots\r\n*2\r\n:5461\r\n:10922\r\n$5\r\nnodes\r\n*1\r\n*16\r\n$2\r\n\
id\r\n$40\r\n54af685f18c0ef0d0a26240a6be0c01d5795e658\r\n$4\r\nport\r\n:21002\r\n$2\r\n\
ip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$8\r\nhostname\r\n$13\r\n\
node2.example\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:0\r\n$6\r\n\
health\r\n$6\r\nonline\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:5460\r\n$5\r\nnodes\r\n*2\r\n\
*14\r\n$2\r\nid\r\n$40\r\n6901d2f27ca20a78dff17f496b958368683aab1e\r\n$4\r\nport\r\n\
:21001\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n\
$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:98\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*14\r\n\
$2\r\nid\r\n$40\r\n5019d6f94c79616dc8c3a4729d1b1dd7af86a335\r\n$4\r\nport\r\n:21004\r\n\
$2\r\nip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$7\r\n\
replica\r\n$18\r\nreplication-offset\r\n:98\r\n$6\r\nhealth\r\n$6\r\nonline\r\n";

/// Valkey 8.1.8, `CLUSTER SLOTS` at 127.0.0.1:21012 with cluster-preferred-endpoint-type
/// hostname: nodes without a hostname show `?`, their IP is in the metadata.
pub(super) const VALKEY_SLOTS_HOSTNAME: &[u8] = b"\
*3\r\n*4\r\n:0\r\n:5460\r\n*4\r\n$1\r\n?\r\n:21011\r\n$40\r\n\
09bd939c8b386c78006c0b0968e7f54ae3e27d19\r\n*2\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n*4\r\n\
$1\r\n?\r\n:21014\r\n$40\r\n8116309cf79874effb86ba5414418b74e084852c\r\n*2\r\n$2\r\nip\r\n\
$9\r\n127.0.0.1\r\n*3\r\n:5461\r\n:10922\r\n*4\r\n$13\r\nnode2.example\r\n:21012\r\n$40\r\n\
acbf5459808accdca33575614a0d83a9136b57aa\r\n*2\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n*3\r\n\
:10923\r\n:16383\r\n*4\r\n$1\r\n?\r\n:21013\r\n$40\r\n\
af6a8ab7d493b523956680fea37528075a5e90c7\r\n*2\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n";

/// Valkey 8.1.8, `CLUSTER SHARDS` at 127.0.0.1:21012 with cluster-preferred-endpoint-type
/// hostname: endpoint `?` or the hostname; 21013 and 21016 have been killed (health fail).
pub(super) const VALKEY_SHARDS_HOSTNAME: &[u8] = b"\
*4\r\n*4\r\n$5\r\nslots\r\n*0\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\nid\r\n$40\r\n\
0e7bf0bc0f2eb5254abbf5e3b74bf2645c799ce1\r\n$4\r\nport\r\n:21016\r\n$2\r\nip\r\n$9\r\n\
127.0.0.1\r\n$8\r\nendpoint\r\n$1\r\n?\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\n\
replication-offset\r\n:14\r\n$6\r\nhealth\r\n$4\r\nfail\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n\
:5460\r\n$5\r\nnodes\r\n*2\r\n*14\r\n$2\r\nid\r\n$40\r\n\
09bd939c8b386c78006c0b0968e7f54ae3e27d19\r\n$4\r\nport\r\n:21011\r\n$2\r\nip\r\n$9\r\n\
127.0.0.1\r\n$8\r\nendpoint\r\n$1\r\n?\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\n\
replication-offset\r\n:112\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*14\r\n$2\r\nid\r\n$40\r\n\
8116309cf79874effb86ba5414418b74e084852c\r\n$4\r\nport\r\n:21014\r\n$2\r\nip\r\n$9\r\n\
127.0.0.1\r\n$8\r\nendpoint\r\n$1\r\n?\r\n$4\r\nrole\r\n$7\r\nreplica\r\n$18\r\n\
replication-offset\r\n:112\r\n$6\r\nhealth\r\n$6\r\nonline\r\n*4\r\n$5\r\nslots\r\n*2\r\n\
:5461\r\n:10922\r\n$5\r\nnodes\r\n*1\r\n*16\r\n$2\r\nid\r\n$40\r\n\
acbf5459808accdca33575614a0d83a9136b57aa\r\n$4\r\nport\r\n:21012\r\n$2\r\nip\r\n$9\r\n\
127.0.0.1\r\n$8\r\nendpoint\r\n$13\r\nnode2.example\r\n$8\r\nhostname\r\n$13\r\n\
node2.example\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:0\r\n$6\r\n\
health\r\n$6\r\nonline\r\n*4\r\n$5\r\nslots\r\n*2\r\n:10923\r\n:16383\r\n$5\r\nnodes\r\n\
*1\r\n*14\r\n$2\r\nid\r\n$40\r\naf6a8ab7d493b523956680fea37528075a5e90c7\r\n$4\r\nport\r\n\
:21013\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$1\r\n?\r\n$4\r\nrole\r\n$6\r\n\
master\r\n$18\r\nreplication-offset\r\n:0\r\n$6\r\nhealth\r\n$4\r\nfail\r\n";

/// Redis 7.0.15, `CLUSTER NODES` at 127.0.0.1:21001 (same moment as REDIS_SHARDS_RESP2), after
/// `CLUSTER SETSLOT 42 MIGRATING <21002's id>`.
pub(super) const REDIS_NODES_MIGRATING: &str = r#"5019d6f94c79616dc8c3a4729d1b1dd7af86a335 127.0.0.1:21004@31004 slave 6901d2f27ca20a78dff17f496b958368683aab1e 0 1795989113000 1 connected
e45852feb38a885187a341f6515b7bc739776c37 127.0.0.1:21003@31003 master - 0 1795989113114 0 connected 10923-16383
5da04f504145c92d300c302f9d4dd5f5dc385436 127.0.0.1:21006@31006 master - 0 1795989113114 4 connected
54af685f18c0ef0d0a26240a6be0c01d5795e658 127.0.0.1:21002@31002,node2.example master - 0 1795989113114 3 connected 5461-10922
6901d2f27ca20a78dff17f496b958368683aab1e 127.0.0.1:21001@31001 myself,master - 0 1795989112000 1 connected 0-5460 [42->-54af685f18c0ef0d0a26240a6be0c01d5795e658]
"#;

/// Redis 7.0.15, `CLUSTER NODES` at 127.0.0.1:21002, after `CLUSTER SETSLOT 42 IMPORTING
/// <21001's id>`.
pub(super) const REDIS_NODES_IMPORTING: &str = r#"e45852feb38a885187a341f6515b7bc739776c37 127.0.0.1:21003@31003 master - 0 1795989113000 0 connected 10923-16383
54af685f18c0ef0d0a26240a6be0c01d5795e658 127.0.0.1:21002@31002,node2.example myself,master - 0 1795989112000 3 connected 5461-10922 [42-<-6901d2f27ca20a78dff17f496b958368683aab1e]
5da04f504145c92d300c302f9d4dd5f5dc385436 127.0.0.1:21006@31006 master - 0 1795989113196 4 connected
6901d2f27ca20a78dff17f496b958368683aab1e 127.0.0.1:21001@31001 master - 0 1795989112893 1 connected 0-5460
5019d6f94c79616dc8c3a4729d1b1dd7af86a335 127.0.0.1:21004@31004 slave 6901d2f27ca20a78dff17f496b958368683aab1e 0 1795989113095 1 connected
"#;

/// Valkey 8.1.8, `CLUSTER NODES` at the replica 127.0.0.1:21014 (note `0 0` ping/pong on its own
/// line).
pub(super) const VALKEY_NODES_REPLICA: &str = r#"0e7bf0bc0f2eb5254abbf5e3b74bf2645c799ce1 127.0.0.1:21016@31016 master - 0 1795989112291 4 connected
09bd939c8b386c78006c0b0968e7f54ae3e27d19 127.0.0.1:21011@31011 master - 0 1795989113197 1 connected 0-5460
af6a8ab7d493b523956680fea37528075a5e90c7 127.0.0.1:21013@31013 master - 0 1795989113093 0 connected 10923-16383
acbf5459808accdca33575614a0d83a9136b57aa 127.0.0.1:21012@31012,node2.example master - 0 1795989112893 2 connected 5461-10922
8116309cf79874effb86ba5414418b74e084852c 127.0.0.1:21014@31014 myself,slave 09bd939c8b386c78006c0b0968e7f54ae3e27d19 0 0 1 connected
"#;

/// Redis 7.0.15, `CLUSTER NODES` at 127.0.0.1:21001 after 21003 was killed (now `fail`) and, 2 s
/// ago,
/// 21006 too (only suspected so far: `fail?`).
pub(super) const REDIS_NODES_FAILING: &str = r#"5019d6f94c79616dc8c3a4729d1b1dd7af86a335 127.0.0.1:21004@31004 slave 6901d2f27ca20a78dff17f496b958368683aab1e 0 1795989141113 1 connected
e45852feb38a885187a341f6515b7bc739776c37 127.0.0.1:21003@31003 master,fail - 1795989123061 1795989122055 0 disconnected 10923-16383
5da04f504145c92d300c302f9d4dd5f5dc385436 127.0.0.1:21006@31006 master,fail? - 1795989139097 1795989138091 4 disconnected
54af685f18c0ef0d0a26240a6be0c01d5795e658 127.0.0.1:21002@31002,node2.example master - 0 1795989141113 3 connected 5461-10922
6901d2f27ca20a78dff17f496b958368683aab1e 127.0.0.1:21001@31001 myself,master - 0 1795989141000 1 connected 0-5460 [42->-54af685f18c0ef0d0a26240a6be0c01d5795e658]
"#;

/// Valkey 8.1.8, `CLUSTER NODES` at 127.0.0.1:21012 (importing slot 42) right after
/// `CLUSTER MEET 127.0.0.1 21099` (nothing listens there) with 21013 and 21016 killed.
pub(super) const VALKEY_NODES_HANDSHAKE: &str = r#"af6a8ab7d493b523956680fea37528075a5e90c7 127.0.0.1:21013@31013 master,fail - 1795989123071 1795989122066 0 disconnected 10923-16383
8116309cf79874effb86ba5414418b74e084852c 127.0.0.1:21014@31014 slave 09bd939c8b386c78006c0b0968e7f54ae3e27d19 0 1795989148184 1 connected
acbf5459808accdca33575614a0d83a9136b57aa 127.0.0.1:21012@31012,node2.example myself,master - 0 0 2 connected 5461-10922 [42-<-09bd939c8b386c78006c0b0968e7f54ae3e27d19]
09bd939c8b386c78006c0b0968e7f54ae3e27d19 127.0.0.1:21011@31011 master - 0 1795989148083 1 connected 0-5460
8e4003122e13473ff498261d69a3f07ef738a1b1 127.0.0.1:21099@31099 handshake - 0 0 0 disconnected
0e7bf0bc0f2eb5254abbf5e3b74bf2645c799ce1 127.0.0.1:21016@31016 master,fail - 1795989139111 1795989138104 4 disconnected
"#;

/// Redis 7.0.15, `CLUSTER NODES` of a lone node (127.0.0.1:21005): it does not know its own IP.
pub(super) const REDIS_NODES_LONE: &str =
    "4cf999639a7f9fc8e0271c1ebc9649e079888e9b :21005@31005 myself,master - 0 0 0 connected 0-99\n";

/// The one RESP reply `bytes` hold.
pub(super) fn resp(bytes: &[u8]) -> Value {
    let (value, used) = parse(bytes).unwrap().unwrap();
    assert_eq!(used, bytes.len(), "fixture holds exactly one reply");
    value
}

/// The node id `text`.
pub(super) fn id(text: &str) -> NodeId {
    NodeId::new(text).unwrap()
}

/// Slot `n`.
pub(super) fn slot(n: u16) -> Slot {
    Slot::new(n).unwrap()
}

/// The address `text` (`host:port`).
pub(super) fn addr(text: &str) -> NodeAddr {
    text.parse().unwrap()
}

/// The slots `a` to `b`.
pub(super) fn range(a: u16, b: u16) -> SlotRange {
    SlotRange::new(slot(a), slot(b)).unwrap()
}

/// Per shard: its slots and its node ids (primary first).
pub(super) fn layout(view: &TopologyView) -> Vec<(Vec<SlotRange>, Vec<&str>)> {
    view.shards
        .iter()
        .map(|s| {
            (
                s.slots.clone(),
                s.nodes.iter().map(|n| n.id.as_str()).collect(),
            )
        })
        .collect()
}

/// The layout of the Redis fixtures: 21001 with its replica 21004, 21002, 21003, then 21006.
pub(super) fn redis_layout() -> Vec<(Vec<SlotRange>, Vec<&'static str>)> {
    vec![
        (vec![range(0, 5460)], vec![R1, R4]),
        (vec![range(5461, 10922)], vec![R2]),
        (vec![range(10923, 16383)], vec![R3]),
        (vec![], vec![R6]),
    ]
}

/// The owner of every slot by [`TopologyView::owner_of`], indexed by slot number.
pub(super) fn owners(view: &TopologyView) -> Vec<Option<NodeId>> {
    (0..16384)
        .filter_map(Slot::new)
        .map(|s| view.owner_of(s).cloned())
        .collect()
}
