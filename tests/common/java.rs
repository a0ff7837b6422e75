//! The Redisson JVM harness for the tests that put a Java party in the game: which `java` runs
//! and which harness jar (`java -jar`, line protocol of compat-tests/README.md), found the same
//! way by every test.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The Redisson version of the harness the tests run.
pub const REDISSON: &str = "4.7.0";
/// The variable naming a prebuilt harness jar (`scripts/test` exports it).
pub const JAR_VAR: &str = "REDISSON_HARNESS_JAR";

/// A JDK and a harness jar to run.
pub struct Harness {
    /// The `java` command.
    pub java: String,
    /// The harness jar.
    pub jar: PathBuf,
    /// Where the jar came from, for reports.
    pub source: String,
}

/// Whether this is a CI run (`CI=true`), where missing Java tooling fails instead of skipping.
pub fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// `name` on `PATH` (or the path itself when it has a `/`), when it is an executable file.
pub fn find_command(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    };
    if name.contains('/') {
        let p = PathBuf::from(name);
        return executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| executable(p))
}

/// `$JAVA` (default `java`) must be found; the jar is `$REDISSON_HARNESS_JAR`, else
/// `compat-tests/build-harness.sh 4.7.0` builds it (a no-op when it is up to date; needs Maven
/// otherwise). `Err` says why not.
pub fn locate() -> Result<Harness, String> {
    let java = std::env::var("JAVA").unwrap_or_else(|_| "java".to_owned());
    if find_command(&java).is_none() {
        return Err(format!("no JDK: `{java}` not found on PATH"));
    }
    if let Some(jar) = std::env::var_os(JAR_VAR).filter(|v| !v.is_empty()) {
        let jar = PathBuf::from(jar);
        assert!(
            jar.is_file(),
            "{JAR_VAR}={} is not a file (unset it to build the harness jar on demand)",
            jar.display()
        );
        return Ok(Harness {
            java,
            jar,
            source: format!("`{JAR_VAR}`"),
        });
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("compat-tests/build-harness.sh");
    let built = Command::new("bash")
        .arg(&script)
        .arg(REDISSON)
        .stdin(Stdio::null())
        .output();
    match built {
        Ok(o) if o.status.success() => {
            let out = String::from_utf8_lossy(&o.stdout);
            let jar = PathBuf::from(out.lines().last().unwrap_or_default().trim());
            if jar.is_file() {
                Ok(Harness {
                    java,
                    jar,
                    source: format!("`compat-tests/build-harness.sh {REDISSON}`"),
                })
            } else {
                Err(format!(
                    "compat-tests/build-harness.sh printed no jar path: {out:?}"
                ))
            }
        }
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            let last = err
                .lines()
                .rev()
                .find(|l| l.contains("build-harness"))
                .unwrap_or_else(|| err.lines().last().unwrap_or_default())
                .trim()
                .to_owned();
            if find_command("mvn").is_none() {
                Err(format!("no Maven to build the harness jar ({last})"))
            } else {
                Err(format!("the harness jar did not build ({last})"))
            }
        }
        Err(e) => Err(format!("cannot run {}: {e}", script.display())),
    }
}
