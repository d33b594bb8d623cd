//! What a detector is: one kind of trouble looked for in a finished recording.

use crate::finding::Finding;

use super::context::Context;

/// One kind of trouble looked for in a finished recording.
pub(super) trait Detector {
    /// What it looks for, in a few words ("idle shard").
    fn name(&self) -> &'static str;

    /// Its findings in the recording `ctx` describes (none when the trouble is absent).
    fn detect(&self, ctx: &Context<'_>) -> Vec<Finding>;
}
