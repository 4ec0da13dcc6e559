//! The printer: renders a [`Module`] as NVIDIA's `tileirdisasm` does.
use super::Module;

/// Printer options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrintOptions {
    /// Annotate with debug locations (`tileirdisasm -g`).
    pub debug_info: bool,
}

/// Renders `module` as text.
pub fn print_module(_module: &Module, _options: &PrintOptions) -> String {
    String::new()
}
