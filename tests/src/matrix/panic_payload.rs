//! A caught panic's payload as text: what the harness keeps as a case's error when a server that
//! does not start or a refused cluster command panics inside it, so a long draw goes on.

/// The text of a caught panic's payload.
pub fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a panic".to_owned())
}
