//! Toolkit discovery with injected environments.
mod common;

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::*;
use tileiras::toolchain::{install_hint, SearchEnv, ToolOverrides, Toolkit};

/// Makes `<dir>/<rel>` an executable file.
fn exe(dir: &Path, rel: &str) -> PathBuf {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn env_of(vars: &[(&str, &Path)]) -> SearchEnv {
    let map: HashMap<String, OsString> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned()))
        .collect();
    SearchEnv::from_lookup(move |k| map.get(k).cloned())
}

/// Ten places, each with its own ptxas; removing them one by one walks
/// the documented order.
#[test]
fn order_of_places() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let explicit = exe(d, "explicit/ptxas");
    let config = exe(d, "config/bin/ptxas");
    let root = exe(d, "root/bin/ptxas");
    let home = exe(d, "home/bin/ptxas");
    let path_var = exe(d, "cpath/bin/ptxas");
    let beside_exe = exe(d, "exe/bin/ptxas");
    let beside_lib = exe(d, "libroot/bin/ptxas");
    let own_site = exe(
        d,
        "wheel/lib/python3.12/site-packages/nvidia/cu13/bin/ptxas",
    );
    let on_path = exe(d, "onpath/ptxas");
    let pip = exe(d, "venv/lib/python3.12/site-packages/nvidia/cu13/bin/ptxas");
    let all = [
        &explicit,
        &config,
        &root,
        &home,
        &path_var,
        &beside_exe,
        &beside_lib,
        &own_site,
        &on_path,
        &pip,
    ];
    for (i, expected) in all.iter().enumerate() {
        let mut o = ToolOverrides::default();
        let mut vars: Vec<(&str, PathBuf)> =
            vec![("PATH", d.join("onpath")), ("VIRTUAL_ENV", d.join("venv"))];
        if i == 0 {
            o.ptxas = Some(explicit.clone());
        }
        if i <= 1 {
            o.cuda_root = Some(d.join("config"));
        }
        if i <= 2 {
            vars.push(("CUDA_ROOT", d.join("root")));
        }
        if i <= 3 {
            vars.push(("CUDA_HOME", d.join("home")));
        }
        if i <= 4 {
            vars.push(("CUDA_PATH", d.join("cpath")));
        }
        if i > 8 {
            vars.retain(|(k, _)| *k != "PATH");
        }
        let refs: Vec<(&str, &Path)> = vars.iter().map(|(k, v)| (*k, v.as_path())).collect();
        let mut env = env_of(&refs);
        if i <= 5 {
            env.current_exe = Some(d.join("exe/bin/tileiras"));
        } else if i == 7 {
            env.current_exe = Some(d.join("wheel/bin/tileiras"));
        }
        if i <= 6 {
            env.library = Some(d.join("libroot/lib/libtileiras.so"));
        }
        let tk = Toolkit::resolve_in(&o, &env).unwrap();
        assert_eq!(&tk.ptxas, *expected, "step {i}");
    }
}

#[test]
fn nothing_found_lists_every_place() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::create_dir_all(d.join("venv/lib/python3.12/site-packages")).unwrap();
    // Not executable: skipped.
    let p = d.join("root/bin/ptxas");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, "").unwrap();
    let mut env = env_of(&[
        ("CUDA_ROOT", &d.join("root")),
        ("CUDA_PATH", &d.join("cp")),
        ("PATH", Path::new("/nonexistent/a:/nonexistent/b")),
        ("VIRTUAL_ENV", &d.join("venv")),
    ]);
    env.current_exe = Some(d.join("x/bin/tileiras"));
    let o = ToolOverrides {
        cuda_root: Some(d.join("cfg")),
        ..ToolOverrides::default()
    };
    let e = Toolkit::resolve_in(&o, &env).unwrap_err();
    let d = d.display();
    assert_eq!(
        e.to_string(),
        format!(
            "cannot find ptxas; looked in:\n\
             \x20 {d}/cfg/bin/ptxas (configured CUDA root)\n\
             \x20 {d}/root/bin/ptxas (CUDA_ROOT)\n\
             \x20 {d}/cp/bin/ptxas (CUDA_PATH)\n\
             \x20 {d}/x/bin/ptxas (two directories above the executable)\n\
             \x20 PATH=/nonexistent/a:/nonexistent/b\n\
             \x20 {d}/venv/lib/python3.12/site-packages/nvidia/cu13/bin/ptxas (pip package nvidia/cu13)\n\
             hint: set CUDA_ROOT to a CUDA 13.5 or later toolkit, or run `pip install nvidia-cuda-nvcc` \
             (13.5 or later) in the Python environment tileiras is installed in"
        )
    );
    assert_eq!(
        tileiras::Error::from(e).status(),
        tileiras::Status::CompileFailed
    );
}

#[test]
fn explicit_path_that_is_missing_is_an_error_not_a_fallthrough() {
    let env = env_of(&[("CUDA_ROOT", &cuda_root())]);
    let o = ToolOverrides {
        ptxas: Some("/nonexistent/ptxas".into()),
        ..ToolOverrides::default()
    };
    let e = Toolkit::resolve_in(&o, &env).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "cannot find ptxas; looked in:\n  /nonexistent/ptxas (explicit ptxas path)\n{}",
            install_hint("ptxas")
        )
    );
}

#[test]
fn nvdisasm_is_found_by_the_same_resolver_and_may_be_missing() {
    let t = tempfile::tempdir().unwrap();
    let ptxas = exe(t.path(), "r/bin/ptxas");
    let env = env_of(&[("CUDA_HOME", &t.path().join("r"))]);
    let tk = Toolkit::resolve_in(&ToolOverrides::default(), &env).unwrap();
    assert_eq!(tk.ptxas, ptxas);
    assert!(tk.nvdisasm().is_err());
    let nvd = exe(t.path(), "r/bin/nvdisasm");
    let tk = Toolkit::resolve_in(&ToolOverrides::default(), &env).unwrap();
    assert_eq!(tk.nvdisasm().unwrap(), nvd);
}

#[test]
fn real_toolkit_from_cuda_root_and_from_its_pip_layout() {
    let root = cuda_root();
    let env = env_of(&[("CUDA_ROOT", &root)]);
    let tk = Toolkit::resolve_in(&ToolOverrides::default(), &env).unwrap();
    assert_eq!(tk.ptxas, root.join("bin/ptxas"));
    assert_eq!(tk.nvdisasm().unwrap(), root.join("bin/nvdisasm"));
    // The set-up installs the tools with pip: <venv>/lib/python3.X/site-packages/nvidia/cu13.
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/venv");
    if std::env::var_os("CUDA_ROOT").is_none() {
        assert!(
            venv.is_dir(),
            "{} missing: run scripts/setup.sh",
            venv.display()
        );
        let env = env_of(&[("VIRTUAL_ENV", &venv), ("PATH", Path::new("/nonexistent"))]);
        let tk = Toolkit::resolve_in(&ToolOverrides::default(), &env).unwrap();
        assert!(
            tk.ptxas.ends_with("nvidia/cu13/bin/ptxas"),
            "{}",
            tk.ptxas.display()
        );
        assert_eq!(
            std::fs::canonicalize(&tk.ptxas).unwrap(),
            std::fs::canonicalize(root.join("bin/ptxas")).unwrap()
        );
    }
    // The process's own environment with the root configured.
    let tk = Toolkit::resolve(&ToolOverrides {
        cuda_root: Some(root.clone()),
        ..ToolOverrides::default()
    })
    .unwrap();
    assert_eq!(tk.ptxas, root.join("bin/ptxas"));
}

#[test]
fn explicit_bare_name_is_looked_up_in_path() {
    let t = tempfile::tempdir().unwrap();
    let mine = exe(t.path(), "bin/my-ptxas");
    let env = env_of(&[("PATH", &t.path().join("bin"))]);
    let o = ToolOverrides {
        ptxas: Some("my-ptxas".into()),
        ..ToolOverrides::default()
    };
    assert_eq!(Toolkit::resolve_in(&o, &env).unwrap().ptxas, mine);
    let o = ToolOverrides {
        ptxas: Some("other-ptxas".into()),
        ..ToolOverrides::default()
    };
    assert_eq!(
        Toolkit::resolve_in(&o, &env).unwrap_err().to_string(),
        format!(
            "cannot find ptxas; looked in:\n  other-ptxas (explicit ptxas name, in PATH={})\n{}",
            t.path().join("bin").display(),
            install_hint("ptxas")
        )
    );
}

/// A wheel installs `tileiras` in `<venv>/bin` and the library in
/// `<site>/tileiras_rs/lib`; its `nvidia-cuda-nvcc` dependency puts ptxas in
/// `<site>/nvidia/cu13/bin`. That ptxas wins over one on `PATH` (an older
/// system toolkit), for the executable and for the library alike, with no
/// variable naming the environment.
#[test]
fn the_python_environment_holding_tileiras_gives_its_own_ptxas() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let site = d.join("venv/lib/python3.13/site-packages");
    let pip = exe(&site, "nvidia/cu13/bin/ptxas");
    exe(&site, "nvidia/cu13/bin/nvdisasm");
    exe(d, "system/bin/ptxas");
    let nvdisasm_on_path = exe(d, "system/bin/nvdisasm");
    // Another environment's packages, named by VIRTUAL_ENV, come later.
    exe(
        d,
        "other/lib/python3.13/site-packages/nvidia/cu13/bin/ptxas",
    );
    let env_vars = [
        ("PATH", d.join("system/bin")),
        ("VIRTUAL_ENV", d.join("other")),
    ];
    let refs: Vec<(&str, &Path)> = env_vars.iter().map(|(k, v)| (*k, v.as_path())).collect();

    let mut from_exe = env_of(&refs);
    from_exe.current_exe = Some(d.join("venv/bin/tileiras"));
    let tk = Toolkit::resolve_in(&ToolOverrides::default(), &from_exe).unwrap();
    assert_eq!(tk.ptxas, pip);
    assert_eq!(
        tk.nvdisasm().unwrap(),
        site.join("nvidia/cu13/bin/nvdisasm")
    );

    let mut from_lib = env_of(&refs);
    from_lib.library = Some(site.join("tileiras_rs/lib/libtileiras.so"));
    let tk = Toolkit::resolve_in(&ToolOverrides::default(), &from_lib).unwrap();
    assert_eq!(tk.ptxas, pip);

    // A library in a plain prefix (<prefix>/lib) looks in that prefix's
    // Python folders.
    let mut from_prefix_lib = env_of(&refs);
    from_prefix_lib.library = Some(d.join("venv/lib/libtileiras.so"));
    let tk = Toolkit::resolve_in(&ToolOverrides::default(), &from_prefix_lib).unwrap();
    assert_eq!(tk.ptxas, pip);

    // Without the pip package, PATH is next.
    std::fs::remove_file(&pip).unwrap();
    std::fs::remove_file(site.join("nvidia/cu13/bin/nvdisasm")).unwrap();
    let tk = Toolkit::resolve_in(&ToolOverrides::default(), &from_exe).unwrap();
    assert_eq!(tk.ptxas, d.join("system/bin/ptxas"));
    assert_eq!(tk.nvdisasm().unwrap(), nvdisasm_on_path);

    // And when nothing is found, the place is listed once, in its turn.
    std::fs::remove_file(d.join("system/bin/ptxas")).unwrap();
    std::fs::remove_file(d.join("other/lib/python3.13/site-packages/nvidia/cu13/bin/ptxas"))
        .unwrap();
    let e = Toolkit::resolve_in(&ToolOverrides::default(), &from_exe).unwrap_err();
    let text = e.to_string();
    let own = format!(
        "{} (pip package nvidia/cu13 beside this tileiras)",
        pip.display()
    );
    assert_eq!(text.matches(&own).count(), 1, "{text}");
    assert_eq!(
        text.matches(&pip.display().to_string()).count(),
        1,
        "{text}"
    );
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} in {text}"))
    };
    assert!(at(&own) < at("PATH="), "{text}");
}
