//! `completions SHELL`: a completion script for each shell clap_complete knows, naming every
//! subcommand and the connection options; no Redis is needed (nothing listens at the URL).

use super::run_env;

const SUBCOMMANDS: [&str; 8] = [
    "inspect",
    "list",
    "hold",
    "force-unlock",
    "raise-token",
    "watch",
    "doctor",
    "completions",
];

#[tokio::test]
async fn each_shell_gets_a_script_that_names_the_subcommands() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef redisson-lock"),
        ("fish", "complete -c redisson-lock"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion:arg-completer[redisson-lock]"),
    ] {
        // a URL where nothing listens: completions never connect
        let r = run_env(&["--url", "redis://127.0.0.1:1/", "completions", shell], &[]).await;
        assert_eq!(r.code, Some(0), "{shell}: {}", r.stderr);
        assert!(r.stderr.is_empty(), "{shell}: {}", r.stderr);
        assert!(
            r.stdout.contains(marker),
            "{shell}: no `{marker}` in\n{}",
            r.stdout
        );
        for sub in SUBCOMMANDS {
            assert!(r.stdout.contains(sub), "{shell}: `{sub}` missing");
        }
        // (fish writes `-l tls-ca`, the others `--tls-ca`)
        for flag in ["sentinel", "tls-ca", "json"] {
            assert!(r.stdout.contains(flag), "{shell}: `{flag}` missing");
        }
    }
    // an unknown shell is a usage error
    let r = run_env(&["completions", "tcsh"], &[]).await;
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("tcsh"), "{}", r.stderr);
}
