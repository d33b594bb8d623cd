//! Reading the parts of a RESP reply (`CLUSTER SHARDS`, `CLUSTER SLOTS`): arrays, key/value
//! pairs, slots, ports and endpoints, each failing with a [`TopologyError`] that says where.

use super::TopologyError;
use crate::resp::Value;
use crate::slot::{Slot, SlotRange};

/// The elements of the top-level reply array, or the error it is.
pub(super) fn top_level<'a>(
    reply: &'a Value,
    command: &'static str,
) -> Result<&'a [Value], TopologyError> {
    if let Value::Error(message) = reply {
        return Err(TopologyError::ErrorReply {
            command,
            message: message.clone(),
        });
    }
    array(reply, command)
}

/// `value` as an array.
pub(super) fn array<'a>(value: &'a Value, context: &str) -> Result<&'a [Value], TopologyError> {
    value.as_array().ok_or_else(|| TopologyError::Shape {
        context: context.to_owned(),
        expected: "an array",
        got: value.to_string(),
    })
}

/// `value` as key/value pairs: a RESP3 map, or a RESP2 array of alternating keys and values.
pub(super) fn pairs<'a>(
    value: &'a Value,
    context: &str,
) -> Result<Vec<(&'a Value, &'a Value)>, TopologyError> {
    value.as_pairs().ok_or_else(|| TopologyError::Shape {
        context: context.to_owned(),
        expected: "a map or key/value array",
        got: value.to_string(),
    })
}

/// `value` as a slot number.
fn slot(value: &Value, context: &str) -> Result<Slot, TopologyError> {
    value
        .as_int()
        .and_then(|n| Slot::try_from(n).ok())
        .ok_or_else(|| TopologyError::BadValue {
            context: context.to_owned(),
            field: "slot",
            value: value.to_string(),
        })
}

/// The slot range `start`-`end`.
pub(super) fn range(start: &Value, end: &Value, context: &str) -> Result<SlotRange, TopologyError> {
    let (start, end) = (slot(start, context)?, slot(end, context)?);
    SlotRange::new(start, end).ok_or_else(|| TopologyError::BadValue {
        context: context.to_owned(),
        field: "slot range",
        value: format!("{start}-{end}"),
    })
}

/// A port number; `None` for 0 (not listening).
pub(super) fn port(
    value: &Value,
    context: &str,
    field: &'static str,
) -> Result<Option<u16>, TopologyError> {
    value
        .as_int()
        .and_then(|n| u16::try_from(n).ok())
        .map(|p| (p != 0).then_some(p))
        .ok_or_else(|| TopologyError::BadValue {
            context: context.to_owned(),
            field,
            value: value.to_string(),
        })
}

/// `text` unless it is empty or `?` (the server's "unknown endpoint").
pub(super) fn known_host(text: Option<String>) -> Option<String> {
    text.filter(|h| !h.is_empty() && h != "?")
}

#[cfg(test)]
mod tests {
    use crate::resp::Value;
    use crate::topology::fixture::*;
    use crate::topology::{NodeHealth, TopologyError, TopologyView};

    #[test]
    fn unknown_endpoints_fall_back_to_the_ip() {
        // cluster-preferred-endpoint-type hostname: `?` where no hostname is set.
        let slots = TopologyView::from_slots(&resp(VALKEY_SLOTS_HOSTNAME)).unwrap();
        assert_eq!(
            slots.node(&id(V1)).unwrap().addr,
            Some(addr("127.0.0.1:21011"))
        );
        assert_eq!(
            slots.node(&id(V2)).unwrap().addr,
            Some(addr("node2.example:21012"))
        );
        let shards = TopologyView::from_shards(&resp(VALKEY_SHARDS_HOSTNAME)).unwrap();
        assert_eq!(
            shards.node(&id(V4)).unwrap().addr,
            Some(addr("127.0.0.1:21014"))
        );
        assert_eq!(
            shards.node(&id(V2)).unwrap().addr,
            Some(addr("node2.example:21012"))
        );
        assert_eq!(shards.node(&id(V3)).unwrap().health, NodeHealth::Failed);
        assert_eq!(shards.node(&id(V6)).unwrap().health, NodeHealth::Failed);
    }

    #[test]
    fn rejects_malformed_replies_with_context() {
        let err =
            TopologyView::from_shards(&Value::Error("ERR unknown command".into())).unwrap_err();
        assert!(matches!(
            err,
            TopologyError::ErrorReply {
                command: "CLUSTER SHARDS",
                ..
            }
        ));
        let err = TopologyView::from_slots(&Value::Integer(3)).unwrap_err();
        assert!(matches!(err, TopologyError::Shape { .. }));

        let shard = |slots: Vec<Value>, node: Vec<Value>| {
            Value::Array(vec![Value::Array(vec![
                Value::Simple("slots".into()),
                Value::Array(slots),
                Value::Simple("nodes".into()),
                Value::Array(vec![Value::Array(node)]),
            ])])
        };
        let kv = |k: &str, v: Value| [Value::Simple(k.into()), v];
        let good_node: Vec<Value> = [
            kv("id", Value::Simple(R1.into())),
            kv("port", Value::Integer(7000)),
            kv("role", Value::Simple("master".into())),
        ]
        .concat();
        assert!(TopologyView::from_shards(&shard(vec![], good_node.clone())).is_ok());
        let odd = TopologyView::from_shards(&shard(vec![Value::Integer(1)], good_node.clone()));
        assert!(matches!(odd, Err(TopologyError::Shape { .. })));
        let out_of_range = shard(
            vec![Value::Integer(0), Value::Integer(16384)],
            good_node.clone(),
        );
        let err = TopologyView::from_shards(&out_of_range).unwrap_err();
        assert!(matches!(err, TopologyError::BadValue { field: "slot", .. }));
        assert!(err.to_string().contains("shard 0"), "{err}");
        let no_id = shard(vec![], good_node[2..].to_vec());
        assert!(matches!(
            TopologyView::from_shards(&no_id),
            Err(TopologyError::MissingField { field: "id", .. })
        ));
        let bad_role = [&good_node[..4], &kv("role", Value::Simple("boss".into()))].concat();
        assert!(matches!(
            TopologyView::from_shards(&shard(vec![], bad_role)),
            Err(TopologyError::BadValue { field: "role", .. })
        ));
        let bad_port = [
            &good_node[..2],
            &kv("port", Value::Integer(70000)),
            &good_node[4..],
        ]
        .concat();
        assert!(matches!(
            TopologyView::from_shards(&shard(vec![], bad_port)),
            Err(TopologyError::BadValue { field: "port", .. })
        ));

        let short = Value::Array(vec![Value::Array(vec![
            Value::Integer(0),
            Value::Integer(1),
        ])]);
        assert!(matches!(
            TopologyView::from_slots(&short),
            Err(TopologyError::Shape { .. })
        ));
        let no_id = Value::Array(vec![Value::Array(vec![
            Value::Integer(0),
            Value::Integer(1),
            Value::Array(vec![
                Value::Bulk(b"10.0.0.1".to_vec()),
                Value::Integer(7000),
            ]),
        ])]);
        assert!(matches!(
            TopologyView::from_slots(&no_id),
            Err(TopologyError::MissingField { field: "id", .. })
        ));
    }
}
