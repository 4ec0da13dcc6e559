//! Debug information: the bytecode's debug attributes (files, compile units,
//! subprograms, lexical blocks, locations, call sites).
use super::arena::Handle;

/// A handle to a [`DebugAttr`] in [`super::Module::debug`].
pub type DebugId = Handle<DebugAttr>;

/// One debug-info attribute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DebugAttr {
    /// `loc(unknown)`
    Unknown,
    /// `#cuda_tile.di_compile_unit<file = ...>`
    CompileUnit {
        /// The file.
        file: DebugId,
    },
    /// `#cuda_tile.di_file<"name" in "dir">`
    File {
        /// File name.
        name: String,
        /// Directory.
        directory: String,
    },
    /// `#cuda_tile.di_lexical_block<...>`
    LexicalBlock {
        /// Parent scope.
        scope: DebugId,
        /// File.
        file: DebugId,
        /// Line.
        line: u64,
        /// Column.
        column: u64,
    },
    /// `#cuda_tile.di_loc<loc("file":line:col) in scope>`
    Loc {
        /// Scope (subprogram or lexical block).
        scope: DebugId,
        /// File name.
        filename: String,
        /// Line.
        line: u64,
        /// Column.
        column: u64,
    },
    /// `#cuda_tile.di_subprogram<...>`
    Subprogram {
        /// File.
        file: DebugId,
        /// Line.
        line: u64,
        /// Name.
        name: String,
        /// Linkage name.
        linkage_name: String,
        /// Compile unit.
        compile_unit: DebugId,
        /// Scope line.
        scope_line: u64,
        /// `flags = declaration` (13.5+).
        declaration: bool,
    },
    /// `loc(callsite(callee at caller))`
    CallSite {
        /// Callee location.
        callee: DebugId,
        /// Caller location.
        caller: DebugId,
    },
}
