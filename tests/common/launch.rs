//! Kernel launches in the PTX emulator with cuTile's calling convention.
use ptx_emu::{DevPtr, Device, LaunchConfig, LaunchResult, Module, Param};

/// A launch with cuTile's calling convention: each array is its pointer,
/// then its shape, then its strides (in elements).
pub struct Launch {
    /// The emulated device holding the arrays.
    pub dev: Device,
    /// The kernel parameters so far.
    pub params: Vec<Param>,
}

impl Launch {
    /// No arrays yet.
    pub fn new() -> Launch {
        Launch {
            dev: Device::new(),
            params: Vec::new(),
        }
    }

    /// A C-contiguous array of `shape` holding `data`.
    pub fn array(&mut self, data: &[u8], shape: &[usize]) -> DevPtr {
        let p = self.dev.alloc_from(data);
        self.params.push(Param::U64(p.addr()));
        for &s in shape {
            self.params.push(Param::U32(s as u32));
        }
        let mut stride = 1;
        let mut strides = vec![0; shape.len()];
        for d in (0..shape.len()).rev() {
            strides[d] = stride;
            stride *= shape[d];
        }
        self.params
            .extend(strides.into_iter().map(|s| Param::U32(s as u32)));
        p
    }

    /// Runs kernel `name` of PTX `text` over `grid` tile blocks, with the
    /// block size the kernel's `.reqntid` gives; returns what it printed and
    /// counted.
    pub fn run(&mut self, text: &str, name: &str, grid: (u32, u32, u32)) -> LaunchResult {
        let params = self.params.clone();
        self.launch(text, name, grid, &params)
    }

    /// [`Launch::run`] for our lowered `module`, with the tensor maps its
    /// entry takes written as our host callbacks write them.
    pub fn run_lowered(
        &mut self,
        module: &tileiras::ptx::Module,
        name: &str,
        grid: (u32, u32, u32),
    ) -> LaunchResult {
        let params = super::our_maps::with_maps(module, name, self.params.clone());
        self.launch(&module.to_text(), name, grid, &params)
    }

    fn launch(
        &mut self,
        text: &str,
        name: &str,
        grid: (u32, u32, u32),
        params: &[Param],
    ) -> LaunchResult {
        let m = Module::parse(text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        let block = m.kernel(name).and_then(|k| k.reqntid).expect("reqntid");
        let cfg = LaunchConfig {
            grid,
            block,
            cluster: (1, 1, 1),
            dynamic_smem: 0,
        };
        self.dev
            .launch(&m, name, cfg, params)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    }
}
