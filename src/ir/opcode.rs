//! The opcode table: every public TileIR op with its bytecode opcode,
//! MLIR mnemonic and the bytecode version that introduced it.
//! Generated once from the bytecode encodings of the dialect; edit by hand.

/// Declares the opcode enum from one table.
macro_rules! opcodes {
    ($($(#[$doc:meta])* $name:ident = $code:literal, $mnemonic:literal, $since:literal;)*) => {
        /// A TileIR operation kind. The discriminant is the bytecode opcode.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum Opcode {
            $($(#[$doc])* $name = $code,)*
        }
        impl Opcode {
            /// Every opcode, in opcode order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$name,)*];
            /// The opcode for a bytecode opcode number.
            pub fn from_code(code: u64) -> Option<Opcode> {
                match code { $($code => Some(Opcode::$name),)* _ => None }
            }
            /// The mnemonic without dialect prefix (`addf`).
            pub fn mnemonic(self) -> &'static str {
                match self { $(Opcode::$name => $mnemonic,)* }
            }
            /// The bytecode version (major, minor) that introduced the op.
            pub fn since(self) -> (u8, u8) {
                let s: &str = match self { $(Opcode::$name => $since,)* };
                match s { "13.2" => (13, 2), "13.3" => (13, 3), "13.4" => (13, 4), _ => (13, 1) }
            }
        }
    };
}

opcodes! {
    /// `cuda_tile.absf`
    AbsF = 0, "absf", "13.1";
    /// `cuda_tile.absi`
    AbsI = 1, "absi", "13.1";
    /// `cuda_tile.addf`
    AddF = 2, "addf", "13.1";
    /// `cuda_tile.addi`
    AddI = 3, "addi", "13.1";
    /// `cuda_tile.andi`
    AndI = 4, "andi", "13.1";
    /// `cuda_tile.assert`
    Assert = 5, "assert", "13.1";
    /// `cuda_tile.assume`
    Assume = 6, "assume", "13.1";
    /// `cuda_tile.atomic_cas_tko`
    AtomicCASTko = 7, "atomic_cas_tko", "13.1";
    /// `cuda_tile.atomic_rmw_tko`
    AtomicRMWTko = 8, "atomic_rmw_tko", "13.1";
    /// `cuda_tile.bitcast`
    Bitcast = 9, "bitcast", "13.1";
    /// `cuda_tile.break`
    Break = 10, "break", "13.1";
    /// `cuda_tile.broadcast`
    Broadcast = 11, "broadcast", "13.1";
    /// `cuda_tile.cat`
    Cat = 12, "cat", "13.1";
    /// `cuda_tile.ceil`
    Ceil = 13, "ceil", "13.1";
    /// `cuda_tile.cmpf`
    CmpF = 14, "cmpf", "13.1";
    /// `cuda_tile.cmpi`
    CmpI = 15, "cmpi", "13.1";
    /// `cuda_tile.constant`
    Constant = 16, "constant", "13.1";
    /// `cuda_tile.continue`
    Continue = 17, "continue", "13.1";
    /// `cuda_tile.cos`
    Cos = 18, "cos", "13.1";
    /// `cuda_tile.cosh`
    CosH = 19, "cosh", "13.1";
    /// `cuda_tile.divf`
    DivF = 20, "divf", "13.1";
    /// `cuda_tile.divi`
    DivI = 21, "divi", "13.1";
    /// `cuda_tile.entry`
    Entry = 22, "entry", "13.1";
    /// `cuda_tile.exp`
    Exp = 23, "exp", "13.1";
    /// `cuda_tile.exp2`
    Exp2 = 24, "exp2", "13.1";
    /// `cuda_tile.exti`
    ExtI = 37, "exti", "13.1";
    /// `cuda_tile.extract`
    Extract = 38, "extract", "13.1";
    /// `cuda_tile.floor`
    Floor = 39, "floor", "13.1";
    /// `cuda_tile.fma`
    Fma = 40, "fma", "13.1";
    /// `cuda_tile.for`
    For = 41, "for", "13.1";
    /// `cuda_tile.ftof`
    FToF = 42, "ftof", "13.1";
    /// `cuda_tile.ftoi`
    FToI = 43, "ftoi", "13.1";
    /// `cuda_tile.get_global`
    GetGlobal = 44, "get_global", "13.1";
    /// `cuda_tile.get_index_space_shape`
    GetIndexSpaceShape = 45, "get_index_space_shape", "13.1";
    /// `cuda_tile.get_num_tile_blocks`
    GetNumTileBlocks = 46, "get_num_tile_blocks", "13.1";
    /// `cuda_tile.get_tensor_shape`
    GetTensorShape = 47, "get_tensor_shape", "13.1";
    /// `cuda_tile.get_tile_block_id`
    GetTileBlockId = 48, "get_tile_block_id", "13.1";
    /// `cuda_tile.global`
    Global = 49, "global", "13.1";
    /// `cuda_tile.if`
    If = 50, "if", "13.1";
    /// `cuda_tile.int_to_ptr`
    IntToPtr = 51, "int_to_ptr", "13.1";
    /// `cuda_tile.iota`
    Iota = 58, "iota", "13.1";
    /// `cuda_tile.itof`
    IToF = 59, "itof", "13.1";
    /// `cuda_tile.join_tokens`
    JoinTokens = 60, "join_tokens", "13.1";
    /// `cuda_tile.load_ptr_tko`
    LoadPtrTko = 61, "load_ptr_tko", "13.1";
    /// `cuda_tile.load_view_tko`
    LoadViewTko = 62, "load_view_tko", "13.1";
    /// `cuda_tile.log`
    Log = 63, "log", "13.1";
    /// `cuda_tile.log2`
    Log2 = 64, "log2", "13.1";
    /// `cuda_tile.loop`
    Loop = 65, "loop", "13.1";
    /// `cuda_tile.make_partition_view`
    MakePartitionView = 66, "make_partition_view", "13.1";
    /// `cuda_tile.make_tensor_view`
    MakeTensorView = 67, "make_tensor_view", "13.1";
    /// `cuda_tile.make_token`
    MakeToken = 68, "make_token", "13.1";
    /// `cuda_tile.maxf`
    MaxF = 69, "maxf", "13.1";
    /// `cuda_tile.maxi`
    MaxI = 70, "maxi", "13.1";
    /// `cuda_tile.minf`
    MinF = 71, "minf", "13.1";
    /// `cuda_tile.mini`
    MinI = 72, "mini", "13.1";
    /// `cuda_tile.mmaf`
    MmaF = 73, "mmaf", "13.1";
    /// `cuda_tile.mmai`
    MmaI = 74, "mmai", "13.1";
    /// `cuda_tile.module`
    Module = 75, "module", "13.1";
    /// `cuda_tile.mulf`
    MulF = 76, "mulf", "13.1";
    /// `cuda_tile.mulhii`
    MulhiI = 77, "mulhii", "13.1";
    /// `cuda_tile.muli`
    MulI = 78, "muli", "13.1";
    /// `cuda_tile.negf`
    NegF = 79, "negf", "13.1";
    /// `cuda_tile.negi`
    NegI = 80, "negi", "13.1";
    /// `cuda_tile.offset`
    Offset = 81, "offset", "13.1";
    /// `cuda_tile.ori`
    OrI = 82, "ori", "13.1";
    /// `cuda_tile.permute`
    Permute = 83, "permute", "13.1";
    /// `cuda_tile.fpowf`
    FPowF = 84, "fpowf", "13.1";
    /// `cuda_tile.print_tko`
    PrintTko = 85, "print_tko", "13.1";
    /// `cuda_tile.ptr_to_int`
    PtrToInt = 86, "ptr_to_int", "13.1";
    /// `cuda_tile.ptr_to_ptr`
    PtrToPtr = 87, "ptr_to_ptr", "13.1";
    /// `cuda_tile.reduce`
    Reduce = 88, "reduce", "13.1";
    /// `cuda_tile.remf`
    RemF = 89, "remf", "13.1";
    /// `cuda_tile.remi`
    RemI = 90, "remi", "13.1";
    /// `cuda_tile.reshape`
    Reshape = 91, "reshape", "13.1";
    /// `cuda_tile.return`
    Return = 92, "return", "13.1";
    /// `cuda_tile.rsqrt`
    Rsqrt = 93, "rsqrt", "13.1";
    /// `cuda_tile.scan`
    Scan = 94, "scan", "13.1";
    /// `cuda_tile.select`
    Select = 95, "select", "13.1";
    /// `cuda_tile.shli`
    ShLI = 96, "shli", "13.1";
    /// `cuda_tile.shri`
    ShRI = 97, "shri", "13.1";
    /// `cuda_tile.sin`
    Sin = 98, "sin", "13.1";
    /// `cuda_tile.sinh`
    SinH = 99, "sinh", "13.1";
    /// `cuda_tile.sqrt`
    Sqrt = 100, "sqrt", "13.1";
    /// `cuda_tile.store_ptr_tko`
    StorePtrTko = 101, "store_ptr_tko", "13.1";
    /// `cuda_tile.store_view_tko`
    StoreViewTko = 102, "store_view_tko", "13.1";
    /// `cuda_tile.subf`
    SubF = 103, "subf", "13.1";
    /// `cuda_tile.subi`
    SubI = 104, "subi", "13.1";
    /// `cuda_tile.tan`
    Tan = 105, "tan", "13.1";
    /// `cuda_tile.tanh`
    TanH = 106, "tanh", "13.1";
    /// `cuda_tile.trunci`
    TruncI = 107, "trunci", "13.1";
    /// `cuda_tile.xori`
    XOrI = 108, "xori", "13.1";
    /// `cuda_tile.yield`
    Yield = 109, "yield", "13.1";
    /// `cuda_tile.atan2`
    Atan2 = 110, "atan2", "13.2";
    /// `cuda_tile.pack`
    Pack = 111, "pack", "13.3";
    /// `cuda_tile.unpack`
    Unpack = 112, "unpack", "13.3";
    /// `cuda_tile.alloca`
    Alloca = 113, "alloca", "13.3";
    /// `cuda_tile.mmaf_scaled`
    MmaFScaled = 114, "mmaf_scaled", "13.3";
    /// `cuda_tile.make_gather_scatter_view`
    MakeGatherScatterView = 115, "make_gather_scatter_view", "13.3";
    /// `cuda_tile.make_strided_view`
    MakeStridedView = 116, "make_strided_view", "13.3";
    /// `cuda_tile.atomic_red_view_tko`
    AtomicRedViewTko = 117, "atomic_red_view_tko", "13.3";
    /// `cuda_tile.insert`
    Insert = 118, "insert", "13.4";
    /// `cuda_tile.gdc_launch_dependents_tko`
    GdcLaunchDependentsTko = 119, "gdc_launch_dependents_tko", "13.4";
    /// `cuda_tile.gdc_wait_tko`
    GdcWaitTko = 120, "gdc_wait_tko", "13.4";
    /// `cuda_tile.fpowi`
    FPowI = 121, "fpowi", "13.4";
    /// `cuda_tile.memory_fence_alias_tko`
    MemoryFenceAliasTko = 122, "memory_fence_alias_tko", "13.4";
}

impl Opcode {
    /// Whether the op ends a block (`return`, `yield`, `continue`, `break`).
    pub fn is_terminator(self) -> bool {
        matches!(
            self,
            Opcode::Return | Opcode::Yield | Opcode::Continue | Opcode::Break
        )
    }

    /// The opcode with mnemonic `name` (`addf`, or `cuda_tile.addf`).
    pub fn from_mnemonic(name: &str) -> Option<Opcode> {
        let name = name.strip_prefix("cuda_tile.").unwrap_or(name);
        Opcode::ALL.iter().copied().find(|o| o.mnemonic() == name)
    }
}
