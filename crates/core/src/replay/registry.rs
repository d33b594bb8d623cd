//! The models by name: what `--model NAME` accepts (a model's name, or a library release one
//! covers, see [`super::version`]), read from [`MODELS`], and built by their entry in
//! [`BUILDS`].

use super::client::ClientModel;
use super::descriptor::ModelDescriptor;
use super::models::{BUILDS, MODELS};
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
    match BUILDS.iter().find(|(d, _)| d.name == resolved.model) {
        Some((_, build)) => build(resolved.asked, options),
        None => Err(ReplayError::UnknownModel(resolved.model.to_owned())),
    }
}

impl ModelOptions {
    /// Sets option `key` from its text `value`: `startup_nodes` (`a:1,b:2`) and `socket_timeout`
    /// for every model, else an option of one of [`MODELS`] by its library's name (an alias is
    /// stored under the name), its value checked now when the option has a
    /// [`check`](super::ModelOption::check) and otherwise by the model when it is built. A name no
    /// model knows is kept for the model to refuse; one that cannot be a name at all is refused
    /// here.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ReplayError> {
        if let Some(done) = self.set_common(key, value) {
            return done;
        }
        if !ModelOptions::plausible(key) {
            return Err(ReplayError::UnknownOption(key.to_owned()));
        }
        let declared = MODELS
            .iter()
            .flat_map(|m| m.options.iter())
            .find(|o| o.is_named(key));
        let name = match declared {
            Some(o) => {
                if let Some(check) = o.check {
                    check(value).map_err(|reason| ReplayError::BadValue {
                        option: key.to_owned(),
                        value: value.to_owned(),
                        reason,
                    })?;
                }
                o.name
            }
            None => key,
        };
        self.library
            .insert(name.to_owned(), value.trim().to_owned());
        Ok(())
    }
}
