//! The PTX model and printer.
