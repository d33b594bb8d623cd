//! The models by name: what `--model NAME` accepts (a model's name, or a library release one
//! covers, see [`super::version`]), read from [`MODELS`].

use super::client::ClientModel;
use super::descriptor::ModelDescriptor;
use super::models::MODELS;
use super::options::ModelOptions;
use super::ReplayError;

/// The names of every model, comma-separated (for messages).
pub fn model_names() -> String {
    MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}

/// The model named `name` exactly (one of [`MODELS`]).
pub fn descriptor(name: &str) -> Option<&'static ModelDescriptor> {
    MODELS.iter().copied().find(|m| m.name == name)
}

/// The model named `name` (one of [`MODELS`], or a library release one of them covers:
/// `redis-py@8.1.0` builds `redis-py@8.0.0`, see [`resolve`](super::resolve)) with `options`.
/// The model keeps its own name; [`Resolved::label`](super::Resolved::label) says what it covers.
pub fn model(name: &str, options: ModelOptions) -> Result<Box<dyn ClientModel>, ReplayError> {
    let resolved = match super::version::resolve(name)? {
        Some(r) => r,
        None => return Err(ReplayError::UnknownModel(name.to_owned())),
    };
    match descriptor(resolved.model) {
        Some(d) => (d.build)(resolved.asked, options),
        None => Err(ReplayError::UnknownModel(resolved.model.to_owned())),
    }
}
