//! Known answers for key → slot: `slotscope_core::Slot::for_key` against the server's own
//! `CLUSTER KEYSLOT`, for thousands of pseudo-random keys and the hash-tag corner cases, on Redis
//! and on Valkey.

use slotscope_core::resp::Value;
use slotscope_core::Slot;
use slotscope_tests::{Server, ServerKind, ServerOptions};

/// Keys of random bytes drawn per key.
const RANDOM_KEYS: usize = 6000;
/// Commands per pipelined batch.
const BATCH: usize = 1000;

/// xorshift64*: a tiny seeded generator, so every run checks the same keys.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Random keys: lengths 0..48, a third of them printable, the rest arbitrary bytes, and braces
/// much more often than chance so that hash tags of every shape appear.
fn random_keys(seed: u64, count: usize) -> Vec<Vec<u8>> {
    let mut rng = XorShift(seed);
    (0..count)
        .map(|i| {
            let len = rng.below(48) as usize;
            let printable = i % 3 == 0;
            (0..len)
                .map(|_| match rng.below(10) {
                    0 => b'{',
                    1 => b'}',
                    _ if printable => b' ' + rng.below(95) as u8,
                    _ => rng.below(256) as u8,
                })
                .collect()
        })
        .collect()
}

/// Hand-picked keys around the hash tag rule.
fn tag_keys() -> Vec<Vec<u8>> {
    let text = [
        "",
        "foo",
        "{",
        "}",
        "{}",
        "}{",
        "{}{}",
        "{{}}",
        "{a}",
        "{a}{b}",
        "{a}b",
        "a{b}",
        "a{b}c",
        "{}foo",
        "foo{}",
        "foo{",
        "foo}",
        "foo{}bar{baz}",
        "{{a}}",
        "{a{b}c}",
        "}a{b}",
        "{ }",
        "{user1000}.following",
        "{user1000}.followers",
        "device_imp:0000123456789012",
        "123456789",
        "key:{n}",
        "{{",
        "}}",
        "{}}",
        "{{}",
    ];
    let mut keys: Vec<Vec<u8>> = text.iter().map(|k| k.as_bytes().to_vec()).collect();
    keys.extend([
        vec![0u8],
        vec![0xff, 0xfe, 0x00, 0x7b, 0x7d],
        b"{\x00}".to_vec(),
        b"{\xff\x80}tail".to_vec(),
        b"\r\n{\r\n}".to_vec(),
        vec![b'{'; 1000],
        [b"{".as_slice(), &[b'x'; 5000], b"}"].concat(),
    ]);
    keys
}

fn keyslots_match(kind: ServerKind) {
    let server = Server::start(kind, &ServerOptions::default());
    let mut client = server.client();
    let mut keys = tag_keys();
    keys.extend(random_keys(0x5107_5C0E ^ kind as u64, RANDOM_KEYS));
    let mut checked = 0;
    for batch in keys.chunks(BATCH) {
        let commands: Vec<Vec<&[u8]>> = batch
            .iter()
            .map(|k| vec![b"CLUSTER".as_slice(), b"KEYSLOT", k.as_slice()])
            .collect();
        let replies = client.pipeline(&commands).unwrap();
        for (key, reply) in batch.iter().zip(replies) {
            let ours = Slot::for_key(key).get();
            assert_eq!(
                reply,
                Value::Integer(i64::from(ours)),
                "{kind}: slot of key {:?} (escaped: {})",
                key,
                key.escape_ascii()
            );
            checked += 1;
        }
    }
    assert_eq!(checked, keys.len());
    assert!(checked > RANDOM_KEYS);
}

#[test]
fn redis_keyslot_known_answers() {
    keyslots_match(ServerKind::Redis);
}

#[test]
fn valkey_keyslot_known_answers() {
    keyslots_match(ServerKind::Valkey);
}

#[test]
fn generator_is_seeded() {
    assert_eq!(random_keys(7, 50), random_keys(7, 50));
    assert_ne!(random_keys(7, 50), random_keys(8, 50));
}
