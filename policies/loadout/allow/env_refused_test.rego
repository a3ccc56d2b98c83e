package loadout.allow_test

import data.loadout.allow
import data.tunables.allow as conf

# refused_examples names, for every entry of tunables allow.env_refused, a key it must refuse
# and what that key does (R4). The test below checks each key, in its own case and in lower
# case; test_every_entry_has_an_example fails for an entry of the list this table does not
# name, so the list cannot grow without a test.
refused_examples := {
	# shells and the loader
	"PATH": "the programs every server and tool runs",
	"SHELL": "the shell tools spawn",
	"BASH_ENV": "a file non-interactive bash runs",
	"ENV": "a file sh runs",
	"ZDOTDIR": "where zsh reads its startup files",
	"PS4": "expanded (commands run) by bash -x",
	"PROMPT_COMMAND": "run by bash before each prompt",
	"SHELLOPTS": "bash options",
	"BASHOPTS": "bash options",
	"IFS": "word splitting of every shell script",
	"CDPATH": "where cd goes",
	"GLOBIGNORE": "what globs match",
	"INPUTRC": "readline key bindings (shell commands)",
	"MCP_ACCESS_TOKEN": "the run's own token, loadout's to set",
	"GCONV_PATH": "glibc charset converters (shared objects)",
	"LOCPATH": "glibc locales",
	"NLSPATH": "message catalogs",
	"HOSTALIASES": "resolver host aliases",
	"LOCALDOMAIN": "resolver search domains",
	"RES_OPTIONS": "resolver options",
	"BROWSER": "a program tools open URLs with",
	"EDITOR": "a program git and others run",
	"VISUAL": "a program git and others run",
	"PAGER": "a program git, man and others run",
	"MANPAGER": "a program man runs",
	"VIMINIT": "ex commands vim runs at start",
	"EXINIT": "ex commands vi runs at start",
	"LESS": "less options (+cmd runs at start)",
	"LESSOPEN": "less input preprocessor (a command)",
	"LESSCLOSE": "less input postprocessor (a command)",
	"LESSKEY": "less key bindings (shell commands)",
	"LESSKEYIN": "less key bindings source",
	"LESSKEY_SYSTEM": "system less key bindings",
	"LESSKEYIN_SYSTEM": "system less key bindings source",
	"LESSEDIT": "the editor command of less",
	"TERMINFO": "terminal database every curses program parses",
	"TERMINFO_DIRS": "terminal database search path",
	"LD_PRELOAD": "prefix LD_: shared objects loaded into every process",
	"LD_LIBRARY_PATH": "prefix LD_: library search path",
	"DYLD_INSERT_LIBRARIES": "prefix DYLD_: macOS loader",
	"BASH_FUNC_X": "prefix BASH_FUNC_: exported bash functions",
	# node
	"NODE_OPTIONS": "--require, --import, --loader",
	"NODE_PATH": "node module search path",
	"NODE_EXTRA_CA_CERTS": "node CA certificates",
	"NODE_TLS_REJECT_UNAUTHORIZED": "node TLS checking",
	"NODE_REPL_EXTERNAL_MODULE": "a module node loads instead of the REPL",
	"ELECTRON_RUN_AS_NODE": "an Electron app runs as plain node",
	"NPM_CONFIG_REGISTRY": "prefix NPM_CONFIG_: npm and npx registry",
	"NPM_CONFIG_NODE_OPTIONS": "prefix NPM_CONFIG_: node options of scripts",
	"YARN_REGISTRY": "prefix YARN_: yarn registry",
	"COREPACK_NPM_REGISTRY": "prefix COREPACK_: where corepack fetches package managers",
	"COREPACK_HOME": "prefix COREPACK_: the package manager binaries run",
	"BUN_CONFIG_REGISTRY": "bun registry",
	"BUN_OPTIONS": "bun command-line options (--preload)",
	# python
	"PYTHONPATH": "python module search path",
	"PYTHONHOME": "python standard library location",
	"PYTHONSTARTUP": "a file interactive python runs",
	"PYTHONUSERBASE": "python user site-packages (.pth files run code)",
	"PYTHONWARNINGS": "warning filters that import modules",
	"PYTHONINSPECT": "python stays interactive",
	"PYTHONBREAKPOINT": "a callable breakpoint() imports",
	"PYTHONPLATLIBDIR": "python platform library directory",
	"PYTHONPYCACHEPREFIX": "where python reads cached bytecode",
	"PYTHONHTTPSVERIFY": "TLS checking (distribution patch)",
	"VIRTUAL_ENV": "the interpreter uv, poetry and pipenv run",
	"PIP_INDEX_URL": "prefix PIP_: pip index",
	"PIP_TRUSTED_HOST": "prefix PIP_: pip TLS exceptions",
	"UV_INDEX_URL": "prefix UV_: uv index",
	"UV_PYTHON": "prefix UV_: the interpreter uv runs",
	# ruby
	"RUBYOPT": "ruby options (-r)",
	"RUBYLIB": "ruby load path",
	"GEMRC": "rubygems config (sources)",
	"GEM_HOME": "prefix GEM_: the gems ruby loads",
	"GEM_PATH": "prefix GEM_: the gems ruby loads",
	"BUNDLE_GEMFILE": "prefix BUNDLE_: a Gemfile (ruby code)",
	"RUBYGEMS_GEMDEPS": "prefix RUBYGEMS_: a Gemfile rubygems loads",
	# perl
	"PERL5OPT": "perl options (-M)",
	"PERL5LIB": "perl library path",
	"PERLLIB": "perl library path",
	"PERL5DB": "perl debugger code",
	# lua
	"LUA_PATH": "prefix LUA_: lua module path",
	"LUA_CPATH": "prefix LUA_: lua C module path",
	"LUA_INIT": "prefix LUA_: code lua runs at start",
	"LUA_INIT_5_4": "prefix LUA_: code lua 5.4 runs at start",
	"LUAROCKS_CONFIG": "prefix LUAROCKS_: luarocks config",
	# java
	"JAVA_TOOL_OPTIONS": "options (-javaagent) every JVM reads",
	"_JAVA_OPTIONS": "options every JVM reads",
	"JDK_JAVA_OPTIONS": "options the java launcher reads",
	"CLASSPATH": "java class path",
	"JAVA_HOME": "the JVM launcher scripts run",
	"JRE_HOME": "the JVM launcher scripts run",
	"JDK_HOME": "the JDK build tools run",
	"JAVA_OPTS": "JVM options of launcher scripts",
	"MAVEN_OPTS": "maven JVM options",
	"MAVEN_ARGS": "maven arguments",
	"MAVEN_HOME": "the maven run",
	"M2_HOME": "the maven run",
	"GRADLE_OPTS": "gradle JVM options",
	"GRADLE_USER_HOME": "gradle home (init scripts run)",
	"SBT_OPTS": "sbt JVM options",
	"ANT_OPTS": "ant JVM options",
	# .NET, Erlang, PHP
	"DOTNET_STARTUP_HOOKS": "assemblies .NET runs at start",
	"DOTNET_ADDITIONAL_DEPS": "assemblies .NET loads",
	"DOTNET_SHARED_STORE": "assemblies .NET loads",
	"DOTNET_ROOT": "the .NET runtime run",
	"CORECLR_PROFILER_PATH": "prefix CORECLR_: a profiler .NET loads",
	"COR_PROFILER_PATH": "prefix COR_: a profiler .NET Framework loads",
	"ERL_AFLAGS": "erlang emulator flags (-eval)",
	"ERL_FLAGS": "erlang emulator flags",
	"ERL_ZFLAGS": "erlang emulator flags",
	"ERL_LIBS": "erlang library path",
	"PHPRC": "the php.ini read (auto_prepend_file)",
	"PHP_INI_SCAN_DIR": "more php.ini files",
	# rust
	"RUSTC": "the compiler cargo runs",
	"RUSTDOC": "the rustdoc cargo runs",
	"RUSTFLAGS": "compiler flags (-C linker runs a program)",
	"RUSTDOCFLAGS": "rustdoc flags",
	"RUSTC_WRAPPER": "prefix RUSTC_: a program cargo runs",
	"RUSTC_WORKSPACE_WRAPPER": "prefix RUSTC_: a program cargo runs",
	"CARGO_HOME": "prefix CARGO_: cargo config and credential providers",
	"CARGO_BUILD_RUSTC": "prefix CARGO_: the compiler cargo runs",
	"RUSTUP_TOOLCHAIN": "prefix RUSTUP_: the toolchain run",
	"RUSTUP_DIST_SERVER": "prefix RUSTUP_: where toolchains come from",
	# deno
	"DENO_CERT": "deno CA certificates",
	"DENO_TLS_CA_STORE": "deno CA store",
	"DENO_DIR": "deno cache of compiled modules",
	"DENO_V8_FLAGS": "V8 flags",
	"DENO_INSTALL_ROOT": "where deno installs scripts",
	# go
	"GOFLAGS": "go command flags (-toolexec runs a program)",
	"GOPROXY": "go module proxy",
	"GOSUMDB": "go checksum database",
	"GONOSUMDB": "modules not checked",
	"GONOSUMCHECK": "modules not checked",
	"GOPRIVATE": "modules fetched directly and not checked",
	"GONOPROXY": "modules fetched directly",
	"GOINSECURE": "modules fetched without TLS checking",
	"GOTOOLCHAIN": "the go toolchain run",
	"GOROOT": "the go toolchain run",
	"GOPATH": "go module cache and binaries",
	"GOMODCACHE": "go module cache",
	"GOENV": "the go config file",
	"GOWORK": "the go workspace built",
	"GOEXPERIMENT": "go toolchain experiments",
	"GODEBUG": "go runtime settings (x509, TLS)",
	"GOAUTH": "commands go runs for credentials",
	"GOVCS": "version control tools go may run",
	"GOCACHE": "go build cache",
	"GOCACHEPROG": "a program go runs as its cache",
	"CGO_LDFLAGS": "prefix CGO_: cgo linker flags",
	"CC": "the C compiler native builds run",
	"CXX": "the C++ compiler native builds run",
	"CPP": "the C preprocessor native builds run",
	"LD": "the linker native builds run",
	"CFLAGS": "C compiler flags (-fplugin)",
	"CXXFLAGS": "C++ compiler flags",
	"CPPFLAGS": "preprocessor flags",
	"LDFLAGS": "linker flags",
	# openssl, git, ssh, curl, docker, cloud
	"OPENSSL_CONF": "prefix OPENSSL_: openssl config (engines, providers)",
	"OPENSSL_MODULES": "prefix OPENSSL_: openssl providers",
	"SSL_CERT_FILE": "prefix SSL_CERT_: CA certificates",
	"SSL_CERT_DIR": "prefix SSL_CERT_: CA certificates",
	"GIT_SSH_COMMAND": "prefix GIT_: a program git runs",
	"GIT_CONFIG_GLOBAL": "prefix GIT_: the git config read",
	"GIT_EXEC_PATH": "prefix GIT_: git's own programs",
	"SSH_AUTH_SOCK": "prefix SSH_: another ssh agent",
	"SSH_ASKPASS_REQUIRE": "prefix SSH_: when ssh runs its askpass program",
	"CURL_HOME": "the .curlrc read",
	"WGETRC": "the .wgetrc read",
	"DOCKER_HOST": "another docker daemon",
	"DOCKER_CONTEXT": "another docker endpoint",
	"DOCKER_CONFIG": "docker config (credential helpers are programs)",
	"DOCKER_CERT_PATH": "docker TLS material",
	"DOCKER_TLS_VERIFY": "docker TLS checking",
	"DOCKER_TLS": "docker TLS",
	"CONTAINER_HOST": "another podman service",
	"CONTAINERS_CONF": "podman config",
	"CONTAINERS_REGISTRIES_CONF": "container registries",
	"REGISTRY_AUTH_FILE": "container registry credentials",
	"KUBECONFIG": "another cluster and its credentials",
	"AWS_CONFIG_FILE": "AWS config (credential_process runs a program)",
	"AWS_SHARED_CREDENTIALS_FILE": "AWS credentials",
	"AWS_WEB_IDENTITY_TOKEN_FILE": "AWS identity token",
	"AWS_ENDPOINT_URL": "AWS endpoint",
	"AWS_ENDPOINT_URL_S3": "prefix AWS_ENDPOINT_URL_: an AWS service endpoint",
	"AWS_CONTAINER_CREDENTIALS_FULL_URI": "where AWS credentials are fetched",
	"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "where AWS credentials are fetched",
	"AWS_EC2_METADATA_SERVICE_ENDPOINT": "where AWS credentials are fetched",
	"SSLKEYLOGFILE": "TLS session keys written out",
	"GNUPGHOME": "the keyring signatures are checked with",
	"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": "gRPC CA certificates",
	"HOME": "where every client reads its config",
	"XDG_CONFIG_HOME": "where clients read their config",
	"XDG_CONFIG_DIRS": "where clients read their config",
	"XDG_DATA_HOME": "where clients read their data",
	"XDG_DATA_DIRS": "where clients read their data",
	# suffixes
	"HTTPS_PROXY": "suffix PROXY: another proxy",
	"ALL_PROXY": "suffix PROXY: another proxy",
	"REQUESTS_CA_BUNDLE": "suffix _CA_BUNDLE: python requests CA certificates",
	"CURL_CA_BUNDLE": "suffix _CA_BUNDLE: curl CA certificates",
	"HTTPLIB2_CA_CERTS": "suffix _CA_CERTS: CA certificates",
	"GIT_ASKPASS": "suffix _ASKPASS: a program asked for credentials",
	"SUDO_ASKPASS": "suffix _ASKPASS: a program asked for credentials",
}

# kept_examples are ordinary keys a server passes its own configuration in: none is refused.
kept_examples := {
	"NODE_ENV", "LOG_LEVEL", "DEBUG", "PORT", "GITHUB_TOKEN", "RUST_LOG", "PYTHONUNBUFFERED",
	"AWS_REGION", "AWS_PROFILE", "GOOGLE_API_KEY", "OPENAI_API_KEY", "JAVA_VERSION",
	"DOCKER_BUILDKIT", "LESSON_PLAN", "SSHKEY_NAME", "CARGO", "MCP_SERVER_URL", "TZ",
}

env_drops(key) := {d.code |
	some d in allow.drop with input as {"servers": [{"id": "s", "transport": "stdio", "env": {key: "v"}, "headers": {}}]}
	d.field == "env"
	d.key == key
}

not_refused := {key |
	some key, _ in refused_examples
	some k in {key, lower(key)}
	env_drops(k) != {"env_key_refused"}
}

# Every example is refused, in any case, with env_key_refused.
test_env_refused_examples if {
	print("not refused:", not_refused)
	count(not_refused) == 0
}

wrongly_refused := {key |
	some key in kept_examples
	count(env_drops(key)) > 0
}

test_env_kept_examples if {
	print("refused:", wrongly_refused)
	count(wrongly_refused) == 0
}

# untested names every entry of the list that no example exercises.
untested := ({sprintf("key %s", [k]) | some k in conf.env_refused.keys; not refused_examples[k]} | {sprintf("prefix %s", [p]) |
	some p in conf.env_refused.prefixes
	not example_with_prefix(p)
}) | {sprintf("suffix %s", [s]) |
	some s in conf.env_refused.suffixes
	not example_with_suffix(s)
}

example_with_prefix(p) if {
	some key, _ in refused_examples
	startswith(key, p)
}

example_with_suffix(s) if {
	some key, _ in refused_examples
	endswith(key, s)
}

test_every_entry_has_an_example if {
	print("untested:", untested)
	count(untested) == 0
}

# Every prefix ends with "_", so a prefix never refuses a longer word (GIT_, not GIT).
test_prefixes_end_with_an_underscore if {
	every p in conf.env_refused.prefixes {
		endswith(p, "_")
	}
}
