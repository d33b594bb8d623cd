//! What a group says of itself, as the ranking of its variants weighs it.

/// What a group says of itself: the model covering the release it reports, and its library
/// (reported, or named by its `CLIENT SETINFO` rejection fingerprint), or the libraries that
/// fingerprint leaves when it names several.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Declared<'a> {
    /// `redis-py@8.0.0`.
    pub(super) model: Option<&'a str>,
    /// `redis-py`.
    pub(super) library: Option<&'a str>,
    /// `redis-py`, `go-redis` (empty when `library` is set or nothing is known).
    pub(super) candidates: &'a [String],
    /// The node the group's traffic lands on as a remap to it would send it
    /// ([`GroupWorkload::remap_target`](super::GroupWorkload::remap_target)).
    pub(super) remap: Option<&'a str>,
}

impl Declared<'_> {
    /// How much `model` (`lib@release`) agrees with it: 2 the model itself, 1 its library or
    /// one of the candidate libraries, 0.
    pub(super) fn agreement(&self, model: &str) -> u8 {
        let library = model.split('@').next();
        if Some(model) == self.model {
            2
        } else if library == self.library
            || library.is_some_and(|l| self.candidates.iter().any(|c| c == l))
        {
            1
        } else {
            0
        }
    }

    /// Whether a variant remapping to `remap` is the remap the group's traffic shows (`false`
    /// for every variant when it shows none).
    pub(super) fn lands(&self, remap: Option<&str>) -> bool {
        self.remap.is_some() && remap == self.remap
    }
}
