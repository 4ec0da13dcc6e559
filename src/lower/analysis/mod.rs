//! Analysis: facts read from the tile IR and nothing else (value facts,
//! views, product chains, register need), for the plan.
pub mod chains;
pub mod facts;
pub mod memory;
pub mod register_need;
pub mod values;
pub mod view;
