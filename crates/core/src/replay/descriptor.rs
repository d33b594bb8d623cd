//! What a client model is to everything around it: a [`ModelDescriptor`] (its name, its options,
//! the library releases it covers, how hypotheses replay it). Each model's file exports its
//! descriptor and its [`Build`]; the registry builds from the pairs of both, and
//! [`MODELS`](super::MODELS), the descriptors alone, is what the version resolution, the
//! hypotheses and the viewer read, so that the viewer's first download does not carry the models'
//! code.

use super::client::ClientModel;
use super::options::{ModelOption, ModelOptions};
use super::release::{Coverage, Version};
use super::ReplayError;

/// How the hypotheses replay a model (see
/// [`standard_variants`](crate::hypothesis::standard_variants)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hypotheses {
    /// A model the incidents are first suspected of, replayed first with every axis: with its
    /// defaults, with option `per_node` set to each node of the cluster, with each of `each`
    /// (`key`, `value`), and with the fault axis.
    Suspect {
        /// The option that names a node (`address_remap`).
        per_node: &'static str,
        /// Single options to try one at a time.
        each: &'static [(&'static str, &'static str)],
    },
    /// Another library, replayed with its defaults after the suspects, then with each of `extra`
    /// (a set of `key`, `value` options) after every library's defaults.
    Library {
        /// Option sets to try besides the defaults.
        extra: &'static [&'static [(&'static str, &'static str)]],
    },
    /// The contrast, replayed last with its defaults.
    Contrast,
}

/// Builds a model with the options given; the release asked for when it is not the model's own
/// (`redis-py@7.3.0` builds `redis-py@8.0.0` with `Some(7.3.0)`).
pub type Build = fn(Option<Version>, ModelOptions) -> Result<Box<dyn ClientModel>, ReplayError>;

/// A client model as users and the rest of the tool know it.
#[derive(Clone, Copy, Debug)]
pub struct ModelDescriptor {
    /// Name to pass to [`model`](super::model), `library@version` (or `ideal`).
    pub name: &'static str,
    /// What it imitates, in one line.
    pub about: &'static str,
    /// Where the release's source does what `about` says (file and lines; empty for no library).
    pub source: &'static str,
    /// Its own options (`--help` lists them in this order).
    pub options: &'static [ModelOption],
    /// The releases of its library it covers (`None`: no library, e.g. `ideal`).
    pub coverage: Option<Coverage>,
    /// How the hypotheses replay it.
    pub hypotheses: Hypotheses,
}

impl ModelDescriptor {
    /// The option named `name`, if the model has one.
    pub fn option(&self, name: &str) -> Option<&'static ModelOption> {
        self.options.iter().find(|o| o.name == name)
    }
}

impl PartialEq for ModelDescriptor {
    /// Descriptors are equal when their names are (a name is one model).
    fn eq(&self, other: &ModelDescriptor) -> bool {
        self.name == other.name
    }
}

impl Eq for ModelDescriptor {}
