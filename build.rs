//! Builds the UI (`ui/`) with esbuild into OUT_DIR for embedding: installs its npm packages when
//! `ui/node_modules` is missing or older than the lockfile (`npm ci`), then runs
//! `node ui/build.mjs $OUT_DIR/ui`. With `SKIP_UI_BUILD=1`, or without the `embed-ui` feature,
//! a placeholder bundle is embedded instead so `cargo check` and clippy stay fast.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("ui");
    println!("cargo:rerun-if-env-changed=SKIP_UI_BUILD");
    println!("cargo:rerun-if-changed=build.rs");
    for input in ["ui/src", "ui/build.mjs", "ui/package.json", "ui/package-lock.json", "ui/tsconfig.json"] {
        println!("cargo:rerun-if-changed={input}");
    }

    let skip = std::env::var("SKIP_UI_BUILD").map(|v| v == "1" || v == "true").unwrap_or(false);
    let embed = std::env::var("CARGO_FEATURE_EMBED_UI").is_ok();
    if skip || !embed {
        write_placeholder(&out);
        return;
    }
    let ui = Path::new("ui");
    require_tool("node");
    require_tool("npm");
    if needs_install(ui) {
        run(Command::new("npm").args(["ci", "--no-audit", "--no-fund", "--loglevel=error"]).current_dir(ui), "npm ci (in ui/)");
    }
    let _ = std::fs::remove_dir_all(&out);
    run(Command::new("node").arg("build.mjs").arg(&out).current_dir(ui), "node ui/build.mjs");
    for required in ["server.js", "manifest.json", "client"] {
        if !out.join(required).exists() {
            fail(&format!("ui/build.mjs did not produce {}", out.join(required).display()));
        }
    }
}

fn needs_install(ui: &Path) -> bool {
    let marker = ui.join("node_modules/.package-lock.json");
    let lock = ui.join("package-lock.json");
    match (std::fs::metadata(&marker).and_then(|m| m.modified()), std::fs::metadata(&lock).and_then(|m| m.modified())) {
        (Ok(installed), Ok(locked)) => installed < locked,
        _ => true,
    }
}

fn require_tool(name: &str) {
    let ok = Command::new(name).arg("--version").output().map(|o| o.status.success()).unwrap_or(false);
    if !ok {
        fail(&format!(
            "`{name}` was not found. Building the UI needs Node.js 20+ and npm on the PATH \
             (Debian: apt-get install nodejs npm). To build without the UI, set SKIP_UI_BUILD=1."
        ));
    }
}

fn run(cmd: &mut Command, what: &str) {
    match cmd.status() {
        Ok(s) if s.success() => {}
        Ok(s) => fail(&format!("{what} failed with {s}")),
        Err(e) => fail(&format!("{what} could not start: {e}")),
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("\nerror: building the UI: {msg}\n");
    println!("cargo:warning=building the UI: {msg}");
    std::process::exit(1);
}

fn write_placeholder(out: &Path) {
    let client = out.join("client");
    std::fs::create_dir_all(&client).expect("creating OUT_DIR/ui/client");
    std::fs::write(client.join("placeholder.js"), "console.info('zmarket: UI bundle not built (SKIP_UI_BUILD)');\n")
        .expect("writing placeholder");
    std::fs::write(out.join("manifest.json"), r#"{"js":"placeholder.js","css":""}"#).expect("writing manifest");
    std::fs::write(
        out.join("server.js"),
        r#"globalThis.zmarketRender = function (url, stateJson) {
  var state = JSON.parse(stateJson);
  return JSON.stringify({
    html: '<main><h1>' + state.productName + '</h1><p>The UI bundle was not built (SKIP_UI_BUILD=1).</p></main>',
    status: 200,
    title: state.productName
  });
};
"#,
    )
    .expect("writing placeholder");
}
