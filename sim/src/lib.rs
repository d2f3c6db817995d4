//! Checking what clients saw of Apiary: the recorded history of operations on each
//! object is linearizable ([`linearizability`], a checker in the style of Porcupine
//! over the [`object`] model), and every watch delivered each change once, in order
//! ([`watch_order`]).

pub mod linearizability;
pub mod rng;
pub mod store;
pub mod wire;
pub mod world;
pub mod object;
pub mod watch_order;
