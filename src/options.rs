//! Compile options: the target GPU, optimization level, debug flags, host
//! description and output kind. The C API's config struct and the command
//! line both become an [`Options`].
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// A GPU architecture this compiler targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Gpu {
    /// Ampere A100.
    Sm80,
    /// Ampere GA10x.
    Sm86,
    /// Ampere Orin.
    Sm87,
    /// Ampere, compute capability 8.8.
    Sm88,
    /// Ada.
    Sm89,
    /// Hopper.
    Sm90,
    /// Blackwell B200.
    Sm100,
    /// Blackwell B300.
    Sm103,
    /// Blackwell, compute capability 10.7.
    Sm107,
    /// Blackwell Thor.
    Sm110,
    /// Blackwell GeForce / RTX.
    Sm120,
    /// Blackwell GB10.
    Sm121,
}

impl Gpu {
    /// Every supported GPU, oldest first.
    pub const ALL: [Gpu; 12] = [
        Gpu::Sm80,
        Gpu::Sm86,
        Gpu::Sm87,
        Gpu::Sm88,
        Gpu::Sm89,
        Gpu::Sm90,
        Gpu::Sm100,
        Gpu::Sm103,
        Gpu::Sm107,
        Gpu::Sm110,
        Gpu::Sm120,
        Gpu::Sm121,
    ];

    /// The name users write (`sm_90`).
    pub fn name(self) -> &'static str {
        match self {
            Gpu::Sm80 => "sm_80",
            Gpu::Sm86 => "sm_86",
            Gpu::Sm87 => "sm_87",
            Gpu::Sm88 => "sm_88",
            Gpu::Sm89 => "sm_89",
            Gpu::Sm90 => "sm_90",
            Gpu::Sm100 => "sm_100",
            Gpu::Sm103 => "sm_103",
            Gpu::Sm107 => "sm_107",
            Gpu::Sm110 => "sm_110",
            Gpu::Sm120 => "sm_120",
            Gpu::Sm121 => "sm_121",
        }
    }

    /// Compute capability as `major * 10 + minor` (90 for sm_90).
    pub fn capability(self) -> u32 {
        self.name()[3..].parse().expect("names are sm_<digits>")
    }

    /// The architecture passed to ptxas `-arch` and written in `.target`:
    /// the architecture-specific `a` variant where one exists, so that
    /// Hopper and Blackwell-only instructions are available.
    pub fn ptx_target(self) -> &'static str {
        match self {
            Gpu::Sm80 => "sm_80",
            Gpu::Sm86 => "sm_86",
            Gpu::Sm87 => "sm_87",
            Gpu::Sm88 => "sm_88",
            Gpu::Sm89 => "sm_89",
            Gpu::Sm90 => "sm_90a",
            Gpu::Sm100 => "sm_100a",
            Gpu::Sm103 => "sm_103a",
            Gpu::Sm107 => "sm_107a",
            Gpu::Sm110 => "sm_110a",
            Gpu::Sm120 => "sm_120a",
            Gpu::Sm121 => "sm_121a",
        }
    }
}

impl fmt::Display for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Gpu {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Gpu::ALL
            .into_iter()
            .find(|g| g.name() == s)
            .ok_or_else(|| format!("unsupported GPU '{s}'"))
    }
}

/// What the compiler hands back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutputKind {
    /// The cubin as ptxas wrote it.
    Cubin,
    /// A host relocatable object that embeds the cubin.
    HostObject,
    /// The generated PTX text.
    Ptx,
    /// SASS text from nvdisasm.
    Sass,
}

impl OutputKind {
    /// Whether the output is text (PTX or SASS).
    pub fn is_text(self) -> bool {
        matches!(self, OutputKind::Ptx | OutputKind::Sass)
    }
}

/// The host a relocatable object is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HostArch {
    /// x86-64.
    X86_64,
    /// 64-bit Arm.
    Aarch64,
}

/// The host operating system a relocatable object is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HostOs {
    /// Linux: ELF.
    Linux,
    /// Windows: COFF.
    Windows,
}

/// Sanitizer instrumentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Sanitize {
    /// None.
    #[default]
    None,
    /// compute-sanitizer memcheck instrumentation.
    Memcheck,
}

/// Everything that steers one compilation.
#[derive(Clone, Debug)]
pub struct Options {
    /// Target GPU.
    pub gpu: Gpu,
    /// Optimization level, 0..=3.
    pub opt_level: u8,
    /// Full device debug info (`-g`); needs `opt_level == 0`.
    pub device_debug: bool,
    /// Line info (`.loc`) without full debug info.
    pub line_info: bool,
    /// Host architecture for the relocatable object.
    pub host_arch: HostArch,
    /// Host OS for the relocatable object.
    pub host_os: HostOs,
    /// Sanitizer instrumentation.
    pub sanitize: Sanitize,
    /// What to produce.
    pub output: OutputKind,
    /// CUDA toolkit root overriding every other lookup.
    pub cuda_root: Option<PathBuf>,
    /// Explicit ptxas executable.
    pub ptxas: Option<PathBuf>,
    /// Explicit nvdisasm executable.
    pub nvdisasm: Option<PathBuf>,
    /// Limit on each external tool's run; `None` waits for ever.
    pub tool_timeout: Option<Duration>,
    /// Where the output will be written, when it goes to a file; the debug
    /// dump environment variables write their files next to it.
    pub output_path: Option<PathBuf>,
    /// No shared-memory cap for the lowering (`TILE_AS_DEBUG_UNLIMITED_SMEM`:
    /// code may then need more than the GPU has).
    pub unlimited_smem: bool,
    /// Swizzle the `mma.sync` operand buffers instead of padding their rows
    /// (`TILEIR_ALWAYS_SWIZZLE`).
    pub always_swizzle: bool,
    /// Let the plan copy with TMA where it can (off with `TILEIRAS_NO_TMA`).
    pub tma: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            gpu: Gpu::Sm90,
            opt_level: 3,
            device_debug: false,
            line_info: false,
            host_arch: if cfg!(target_arch = "aarch64") {
                HostArch::Aarch64
            } else {
                HostArch::X86_64
            },
            host_os: if cfg!(windows) {
                HostOs::Windows
            } else {
                HostOs::Linux
            },
            sanitize: Sanitize::None,
            output: OutputKind::HostObject,
            cuda_root: None,
            ptxas: None,
            nvdisasm: None,
            tool_timeout: None,
            output_path: None,
            unlimited_smem: false,
            always_swizzle: false,
            tma: true,
        }
    }
}

/// The message for `-g` with an optimization level other than 0.
pub const OPTIMIZED_DEBUG_MESSAGE: &str =
    "optimized debugging is currently not supported, change the optimization level to 0 or disable full debug info";

impl Options {
    /// Checks the combination of options; the error text is user-facing.
    pub fn validate(&self) -> Result<(), String> {
        if self.opt_level > 3 {
            return Err(format!("invalid optimization level: {}", self.opt_level));
        }
        if self.device_debug && self.opt_level != 0 {
            return Err(OPTIMIZED_DEBUG_MESSAGE.to_string());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_names_round_trip() {
        for g in Gpu::ALL {
            assert_eq!(g.name().parse::<Gpu>(), Ok(g));
        }
        assert!("sm_75".parse::<Gpu>().is_err());
        assert_eq!(Gpu::Sm90.capability(), 90);
        assert_eq!(Gpu::Sm121.capability(), 121);
    }

    #[test]
    fn validate_rejects_bad_combinations() {
        let mut o = Options {
            opt_level: 4,
            ..Options::default()
        };
        assert_eq!(o.validate().unwrap_err(), "invalid optimization level: 4");
        o.opt_level = 3;
        o.device_debug = true;
        assert_eq!(o.validate().unwrap_err(), OPTIMIZED_DEBUG_MESSAGE);
        o.opt_level = 0;
        assert!(o.validate().is_ok());
    }
}
