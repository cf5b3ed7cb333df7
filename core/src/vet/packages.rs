//! Installs of names that pass for popular packages (typosquats) and of internal-looking
//! names a public index would serve (dependency confusion).
//!
//! The popular names are a bundled list written for this project (the most downloaded PyPI
//! and npm packages as of 2025, from memory of the public rankings; no list was fetched). A
//! name is a near miss when it is not itself on the list and is one edit (insertion,
//! deletion, substitution, swap of neighbours) from a listed name of at least five letters,
//! or equal to one after homoglyphs are folded (`0`->`o`, `1`/`I`->`l`, `rn`->`m`, Cyrillic
//! look-alikes). Separators are compared as the index does: PyPI treats `-`, `_` and `.` alike.

/// Popular PyPI projects.
pub(crate) const PYPI: &[&str] = &[
    "boto3",
    "botocore",
    "urllib3",
    "requests",
    "setuptools",
    "certifi",
    "charset-normalizer",
    "idna",
    "typing-extensions",
    "python-dateutil",
    "packaging",
    "s3transfer",
    "aiobotocore",
    "six",
    "numpy",
    "pyyaml",
    "s3fs",
    "fsspec",
    "pip",
    "cryptography",
    "grpcio-status",
    "cffi",
    "pycparser",
    "google-api-core",
    "pandas",
    "importlib-metadata",
    "pydantic",
    "attrs",
    "pyasn1",
    "rsa",
    "zipp",
    "protobuf",
    "jmespath",
    "platformdirs",
    "click",
    "wheel",
    "colorama",
    "markupsafe",
    "jinja2",
    "pytz",
    "filelock",
    "awscli",
    "pluggy",
    "pydantic-core",
    "pytest",
    "tomli",
    "virtualenv",
    "cachetools",
    "googleapis-common-protos",
    "google-auth",
    "wrapt",
    "pyjwt",
    "jsonschema",
    "pyarrow",
    "aiohttp",
    "multidict",
    "yarl",
    "frozenlist",
    "aiosignal",
    "sqlalchemy",
    "psutil",
    "tqdm",
    "docutils",
    "pygments",
    "requests-oauthlib",
    "oauthlib",
    "greenlet",
    "anyio",
    "sniffio",
    "h11",
    "httpx",
    "httpcore",
    "exceptiongroup",
    "iniconfig",
    "decorator",
    "scipy",
    "pillow",
    "openpyxl",
    "beautifulsoup4",
    "soupsieve",
    "lxml",
    "werkzeug",
    "flask",
    "itsdangerous",
    "django",
    "fastapi",
    "starlette",
    "uvicorn",
    "gunicorn",
    "redis",
    "pymysql",
    "psycopg2",
    "psycopg2-binary",
    "grpcio",
    "matplotlib",
    "kiwisolver",
    "pyparsing",
    "cycler",
    "fonttools",
    "contourpy",
    "scikit-learn",
    "joblib",
    "threadpoolctl",
    "tensorflow",
    "keras",
    "torch",
    "torchvision",
    "torchaudio",
    "transformers",
    "tokenizers",
    "safetensors",
    "huggingface-hub",
    "datasets",
    "accelerate",
    "sentencepiece",
    "regex",
    "openai",
    "anthropic",
    "tiktoken",
    "langchain",
    "langchain-core",
    "langchain-community",
    "langchain-openai",
    "langsmith",
    "llama-index",
    "chromadb",
    "faiss-cpu",
    "networkx",
    "sympy",
    "mpmath",
    "black",
    "isort",
    "flake8",
    "pylint",
    "mypy",
    "ruff",
    "coverage",
    "tox",
    "nox",
    "poetry",
    "poetry-core",
    "build",
    "twine",
    "hatchling",
    "setuptools-scm",
    "rich",
    "typer",
    "tabulate",
    "termcolor",
    "python-dotenv",
    "paramiko",
    "bcrypt",
    "pynacl",
    "selenium",
    "playwright",
    "pyopenssl",
    "websocket-client",
    "websockets",
    "docker",
    "kubernetes",
    "ansible",
    "google-cloud-storage",
    "google-cloud-bigquery",
    "azure-core",
    "azure-storage-blob",
    "msal",
    "opentelemetry-api",
    "opentelemetry-sdk",
    "prometheus-client",
    "sentry-sdk",
    "marshmallow",
    "pymongo",
    "elasticsearch",
    "celery",
    "kombu",
    "billiard",
    "xlrd",
    "xlsxwriter",
    "python-docx",
    "pypdf",
    "pypdf2",
    "pdfplumber",
    "pdfminer-six",
    "reportlab",
    "markdown",
    "mistune",
    "nltk",
    "spacy",
    "gensim",
    "seaborn",
    "plotly",
    "dash",
    "streamlit",
    "gradio",
    "jupyter",
    "notebook",
    "ipython",
    "ipykernel",
    "jupyterlab",
    "numba",
    "llvmlite",
    "polars",
    "duckdb",
    "sqlparse",
    "alembic",
    "boto",
    "moto",
    "responses",
    "requests-toolbelt",
    "pytest-cov",
    "pytest-mock",
    "pytest-asyncio",
    "hypothesis",
    "faker",
    "freezegun",
    "simplejson",
    "ujson",
    "orjson",
    "msgpack",
    "cloudpickle",
    "dill",
    "shapely",
    "geopandas",
    "opencv-python",
    "scikit-image",
    "imageio",
    "xgboost",
    "lightgbm",
    "catboost",
    "statsmodels",
    "patsy",
    "onnx",
    "onnxruntime",
    "mlflow",
    "wandb",
    "optuna",
    "ray",
    "dask",
    "distributed",
    "toolz",
    "cython",
    "pybind11",
    "cmake",
    "ninja",
    "nvidia-cudnn-cu12",
    "triton",
    "jax",
    "jaxlib",
    "flax",
    "einops",
    "timm",
    "diffusers",
    "peft",
    "bitsandbytes",
    "vllm",
    "sentence-transformers",
    "colorlog",
    "loguru",
    "structlog",
    "pyzmq",
    "tornado",
    "traitlets",
    "nbformat",
    "nbconvert",
    "arrow",
    "pendulum",
    "tzdata",
    "babel",
    "chardet",
    "html5lib",
    "bleach",
    "pycryptodome",
    "pyserial",
    "pexpect",
    "ptyprocess",
    "sh",
    "invoke",
    "fabric",
    "gitpython",
    "pygithub",
    "slack-sdk",
    "discord-py",
    "tweepy",
    "stripe",
    "twilio",
    "sendgrid",
];

/// Popular npm packages.
pub(crate) const NPM: &[&str] = &[
    "lodash",
    "react",
    "react-dom",
    "chalk",
    "commander",
    "express",
    "debug",
    "axios",
    "tslib",
    "semver",
    "uuid",
    "typescript",
    "glob",
    "minimatch",
    "yargs",
    "fs-extra",
    "moment",
    "dotenv",
    "body-parser",
    "classnames",
    "prop-types",
    "webpack",
    "babel-core",
    "@babel/core",
    "eslint",
    "prettier",
    "jest",
    "mocha",
    "chai",
    "rxjs",
    "vue",
    "next",
    "request",
    "async",
    "bluebird",
    "underscore",
    "colors",
    "inquirer",
    "ora",
    "node-fetch",
    "cross-env",
    "rimraf",
    "mkdirp",
    "ws",
    "socket.io",
    "mongoose",
    "mongodb",
    "redis",
    "pg",
    "mysql",
    "mysql2",
    "sequelize",
    "jsonwebtoken",
    "bcrypt",
    "bcryptjs",
    "cors",
    "helmet",
    "morgan",
    "nodemon",
    "dayjs",
    "date-fns",
    "zod",
    "yup",
    "joi",
    "ajv",
    "qs",
    "cookie-parser",
    "multer",
    "sharp",
    "jquery",
    "bootstrap",
    "tailwindcss",
    "postcss",
    "autoprefixer",
    "sass",
    "less",
    "vite",
    "rollup",
    "esbuild",
    "parcel",
    "ts-node",
    "tsx",
    "vitest",
    "cypress",
    "playwright",
    "puppeteer",
    "@playwright/test",
    "cheerio",
    "jsdom",
    "marked",
    "markdown-it",
    "handlebars",
    "ejs",
    "pug",
    "nanoid",
    "shelljs",
    "execa",
    "cross-spawn",
    "chokidar",
    "minimist",
    "meow",
    "yaml",
    "js-yaml",
    "xml2js",
    "csv-parse",
    "papaparse",
    "immer",
    "redux",
    "react-redux",
    "mobx",
    "zustand",
    "styled-components",
    "@emotion/react",
    "graphql",
    "apollo-server",
    "@apollo/client",
    "openai",
    "@anthropic-ai/sdk",
    "langchain",
    "electron",
    "firebase",
    "aws-sdk",
    "@aws-sdk/client-s3",
    "googleapis",
    "stripe",
    "twilio",
    "nodemailer",
    "winston",
    "pino",
    "bunyan",
    "log4js",
    "http-proxy",
    "http-server",
    "serve",
    "concurrently",
    "npm-run-all",
    "husky",
    "lint-staged",
    "typeorm",
    "prisma",
    "@prisma/client",
    "knex",
    "passport",
    "express-session",
    "connect",
    "koa",
    "fastify",
    "hapi",
    "nestjs",
    "@nestjs/core",
    "angular",
    "@angular/core",
    "svelte",
    "solid-js",
    "preact",
    "three",
    "d3",
    "chart.js",
    "echarts",
    "socket.io-client",
    "form-data",
    "superagent",
    "got",
    "ky",
    "undici",
    "cross-fetch",
    "isomorphic-fetch",
    "core-js",
    "regenerator-runtime",
    "source-map",
    "source-map-support",
    "iconv-lite",
    "buffer",
    "events",
    "readable-stream",
    "string-width",
    "strip-ansi",
    "ansi-styles",
    "supports-color",
    "escape-string-regexp",
    "picocolors",
    "kleur",
    "figlet",
    "boxen",
    "update-notifier",
    "dotenv-expand",
    "cosmiconfig",
    "tar",
    "archiver",
    "adm-zip",
    "jszip",
    "node-gyp",
    "bindings",
    "nan",
    "ethers",
    "web3",
    "crypto-js",
    "node-forge",
    "eventemitter3",
    "p-limit",
    "p-queue",
    "lru-cache",
    "ioredis",
    "bull",
    "agenda",
    "cron",
    "node-cron",
];

/// Popular crates (crates.io's most downloaded, from memory as the lists above).
pub(crate) const CRATES: &[&str] = &[
    "serde",
    "serde_json",
    "serde_yaml",
    "serde_derive",
    "tokio",
    "reqwest",
    "hyper",
    "clap",
    "rand",
    "anyhow",
    "thiserror",
    "regex",
    "log",
    "env_logger",
    "tracing",
    "tracing-subscriber",
    "futures",
    "async-trait",
    "chrono",
    "time",
    "uuid",
    "base64",
    "bytes",
    "once_cell",
    "lazy_static",
    "itertools",
    "rayon",
    "crossbeam",
    "parking_lot",
    "libc",
    "syn",
    "quote",
    "proc-macro2",
    "toml",
    "url",
    "http",
    "axum",
    "actix-web",
    "warp",
    "tower",
    "rustls",
    "openssl",
    "ring",
    "sha2",
    "hex",
    "rusqlite",
    "sqlx",
    "diesel",
    "indexmap",
    "hashbrown",
    "smallvec",
    "bitflags",
    "memchr",
    "walkdir",
    "tempfile",
    "dirs",
    "num-traits",
    "criterion",
    "proptest",
    "tonic",
    "prost",
    "wasm-bindgen",
    "nom",
    "csv",
    "flate2",
    "zip",
    "image",
];

/// Popular Ruby gems.
pub(crate) const GEMS: &[&str] = &[
    "rails",
    "rack",
    "rake",
    "bundler",
    "nokogiri",
    "rest-client",
    "httparty",
    "faraday",
    "activesupport",
    "activerecord",
    "actionpack",
    "devise",
    "puma",
    "sidekiq",
    "rspec",
    "rspec-core",
    "rubocop",
    "pry",
    "json",
    "thor",
    "aws-sdk",
    "aws-sdk-s3",
    "redis",
    "pg",
    "mysql2",
    "sqlite3",
    "sinatra",
    "capistrano",
    "jwt",
    "bcrypt",
    "oauth2",
    "omniauth",
    "dotenv",
    "minitest",
    "webmock",
    "factory_bot",
    "faker",
    "kaminari",
    "sass",
    "sprockets",
    "tzinfo",
    "i18n",
    "concurrent-ruby",
    "addressable",
    "mime-types",
    "net-http",
    "octokit",
];

/// Popular Go modules, by path.
pub(crate) const GO_MODULES: &[&str] = &[
    "github.com/golang-jwt/jwt",
    "github.com/gin-gonic/gin",
    "github.com/spf13/cobra",
    "github.com/spf13/viper",
    "github.com/stretchr/testify",
    "github.com/sirupsen/logrus",
    "github.com/gorilla/mux",
    "github.com/gorilla/websocket",
    "github.com/google/uuid",
    "github.com/go-sql-driver/mysql",
    "github.com/lib/pq",
    "github.com/jackc/pgx",
    "github.com/redis/go-redis",
    "github.com/labstack/echo",
    "github.com/gofiber/fiber",
    "github.com/pkg/errors",
    "github.com/urfave/cli",
    "github.com/joho/godotenv",
    "github.com/prometheus/client_golang",
    "github.com/aws/aws-sdk-go",
    "github.com/aws/aws-sdk-go-v2",
    "go.uber.org/zap",
    "golang.org/x/crypto",
    "golang.org/x/net",
    "golang.org/x/sys",
    "golang.org/x/oauth2",
    "google.golang.org/grpc",
    "google.golang.org/protobuf",
    "gopkg.in/yaml.v3",
    "gorm.io/gorm",
    "k8s.io/client-go",
];

/// Popular GitHub Actions, by `owner/repo`.
pub(crate) const ACTIONS: &[&str] = &[
    "actions/checkout",
    "actions/setup-node",
    "actions/setup-python",
    "actions/setup-go",
    "actions/setup-java",
    "actions/cache",
    "actions/upload-artifact",
    "actions/download-artifact",
    "actions/github-script",
    "actions/create-release",
    "actions/labeler",
    "actions/stale",
    "docker/build-push-action",
    "docker/login-action",
    "docker/setup-buildx-action",
    "docker/metadata-action",
    "aws-actions/configure-aws-credentials",
    "google-github-actions/auth",
    "azure/login",
    "github/codeql-action",
    "codecov/codecov-action",
    "peaceiris/actions-gh-pages",
    "softprops/action-gh-release",
    "pnpm/action-setup",
    "dtolnay/rust-toolchain",
    "Swatinem/rust-cache",
    "hashicorp/setup-terraform",
    "JamesIves/github-pages-deploy-action",
    "peter-evans/create-pull-request",
];

/// The list for a package manager (or a manifest's kind: `cargo`, `gem`, `go`, `actions`).
pub(crate) fn popular(manager: &str) -> &'static [&'static str] {
    match manager {
        "npm" | "pnpm" | "yarn" | "npx" | "bun" | "bunx" | "node" | "deno" => NPM,
        "pip" | "pip3" | "uv" | "poetry" | "pipx" | "conda" | "mamba" => PYPI,
        "cargo" => CRATES,
        "gem" | "bundle" => GEMS,
        "go" => GO_MODULES,
        "actions" => ACTIONS,
        _ => &[],
    }
}

/// The name as the index compares it: lowercase, version and extras cut, PyPI's separators
/// alike.
pub(crate) fn canonical(name: &str, pypi: bool) -> String {
    let cut = name
        .split(['=', '<', '>', '~', '!', '[', ';', ' '])
        .next()
        .unwrap_or(name);
    // npm's `pkg@1.2`, but not a scope's leading `@`
    let cut = match cut.rfind('@') {
        Some(i) if i > 0 => &cut[..i],
        _ => cut,
    };
    let lower = cut.trim().to_lowercase();
    if pypi {
        lower.replace(['_', '.'], "-")
    } else {
        lower
    }
}

/// Look-alike characters folded to the ASCII letter they pass for.
fn fold_homoglyphs(name: &str) -> String {
    let mapped: String = name
        .chars()
        .map(|c| match c {
            '0' => 'o',
            '1' | 'I' | '|' => 'l',
            '5' => 's',
            'а' => 'a',
            'е' => 'e',
            'о' => 'o',
            'р' => 'p',
            'с' => 'c',
            'х' => 'x',
            'у' => 'y',
            'і' => 'i',
            'ј' => 'j',
            'ԁ' => 'd',
            'ѕ' => 's',
            other => other,
        })
        .collect();
    mapped.replace("rn", "m").replace("vv", "w")
}

/// Damerau-Levenshtein distance (optimal string alignment), bounded inputs only.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// The popular package `name` imitates, if it is a near miss of one.
pub(crate) fn typosquat_of(manager: &str, name: &str) -> Option<&'static str> {
    let list = popular(manager);
    // crates.io, like PyPI, takes `-` and `_` for one another
    let pypi = std::ptr::eq(list, PYPI) || std::ptr::eq(list, CRATES);
    let name = canonical(name, pypi);
    if name.len() < 4 || name.len() > 64 || list.iter().any(|p| canonical(p, pypi) == name) {
        return None;
    }
    if std::ptr::eq(list, NPM)
        && let Some(scope) = scope_squat_of(&name)
    {
        return Some(scope);
    }
    let folded = fold_homoglyphs(&name);
    let squeezed = squeeze(&name);
    list.iter().copied().find(|p| {
        let p_canon = canonical(p, pypi);
        if folded == p_canon && folded != name {
            return true;
        }
        if p_canon.len() >= 4 && (squeezed == squeeze(&p_canon) || claims_variant(&name, &p_canon))
        {
            return true;
        }
        if p_canon.len() < 5 || p_canon.len().abs_diff(name.len()) > 1 {
            return false;
        }
        // a suffix that names a variant (`boto3` of `boto`, `torchx`) is not a miss
        if name.starts_with(&p_canon)
            && name[p_canon.len()..]
                .chars()
                .all(|c| c.is_ascii_digit() || c == 'x')
        {
            return false;
        }
        distance(&name, &p_canon) == 1
    })
}

/// npm scopes of well-known publishers: a package under a scope one slip from one of these
/// (`@babeljs/core`, `@typescript_eslint/parser`) passes for theirs. Real scopes one slip from
/// each other (`@aws-sdk` and `@aws-cdk`, `@next` and `@nuxt`) are both listed, so neither is
/// taken for the other's squat.
const NPM_SCOPES: &[&str] = &[
    "@angular",
    "@anthropic-ai",
    "@apollo",
    "@aws-sdk",
    "@azure",
    "@babel",
    "@emotion",
    "@google-cloud",
    "@googleapis",
    "@jest",
    "@modelcontextprotocol",
    "@mui",
    "@nestjs",
    "@octokit",
    "@openai",
    "@playwright",
    "@prisma",
    "@radix-ui",
    "@reduxjs",
    "@rollup",
    "@sentry",
    "@storybook",
    "@supabase",
    "@sveltejs",
    "@tanstack",
    "@testing-library",
    "@trpc",
    "@types",
    "@typescript-eslint",
    "@vercel",
    "@vitejs",
    "@vue",
    "@swc",
    "@esbuild",
    "@eslint",
    "@firebase",
    "@grpc",
    "@hapi",
    "@stripe",
    "@slack",
    "@microsoft",
    "@tailwindcss",
    "@next",
    "@aws-cdk",
    "@aws-crypto",
    "@smithy",
    "@eslint-community",
    "@vueuse",
    "@nuxt",
    "@nuxtjs",
    "@astrojs",
    "@remix-run",
    "@react-native",
    "@expo",
    "@nx",
    "@angular-devkit",
    "@ngrx",
    "@docusaurus",
    "@fortawesome",
    "@headlessui",
    "@heroicons",
    "@sindresorhus",
    "@typed",
];

/// The well-known scope `name`'s scope imitates, if it is one slip from one (a letter, a
/// separator, a doubled letter, or a word like `js` or `official` added).
fn scope_squat_of(name: &str) -> Option<&'static str> {
    let scope = name
        .split('/')
        .next()
        .filter(|s| s.starts_with('@') && name.contains('/'))?;
    if NPM_SCOPES.contains(&scope) {
        return None;
    }
    let bare = |s: &str| s.trim_start_matches('@').replace(['-', '_', '.'], "");
    NPM_SCOPES.iter().copied().find(|real| {
        let (s, r) = (bare(scope), bare(real));
        s == r
            || r.len() >= 4 && distance(scope, real) == 1
            || squeeze(&s) == squeeze(&r)
            || s == format!("{r}js")
            || claims_variant(scope, real)
    })
}

/// The name with runs of one letter cut to one (`colorsss` and `colors` are alike).
fn squeeze(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if !out.ends_with(c) {
            out.push(c);
        }
    }
    out
}

/// Words a squatter adds to a popular name to pass for its new or mended release
/// (`chalk-next`, `patched-lodash`); the real projects ship those as versions, not names.
const VARIANT_WORDS: &[&str] = &[
    "next",
    "new",
    "latest",
    "fixed",
    "patched",
    "secure",
    "official",
    "updated",
    "v2",
    "v3",
    "fork",
    "maintained",
];

/// Whether `name` is the popular `real` with a word of [`VARIANT_WORDS`] before or after it.
fn claims_variant(name: &str, real: &str) -> bool {
    let trimmed = |s: &str| s.trim_matches(['-', '_', '.']).to_string();
    if let Some(rest) = name.strip_prefix(real) {
        return rest.starts_with(['-', '_', '.'])
            && VARIANT_WORDS.contains(&trimmed(rest).as_str());
    }
    if let Some(rest) = name.strip_suffix(real) {
        return rest.ends_with(['-', '_', '.']) && VARIANT_WORDS.contains(&trimmed(rest).as_str());
    }
    false
}

/// Whether a package name looks internal to a company (a name a public index should never
/// serve): `acme-internal-utils`, `@corp/private-sdk`.
pub(crate) fn looks_internal(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "internal",
        "-corp",
        "corp-",
        "private",
        "-priv-",
        "proprietary",
        "intranet",
        "in-house",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// Whether `name` is one of the popular packages of `manager`'s index.
pub(crate) fn is_popular(manager: &str, name: &str) -> bool {
    let list = popular(manager);
    let pypi = std::ptr::eq(list, PYPI) || std::ptr::eq(list, CRATES);
    let name = canonical(name, pypi);
    list.iter().any(|p| canonical(p, pypi) == name)
}

/// Well-known skills people install by name (Anthropic's public skills, and the most
/// installed community ones), as of 2026; a bundled list, nothing is fetched.
pub(crate) const SKILLS: &[&str] = &[
    "algorithmic-art",
    "brand-guidelines",
    "canvas-design",
    "claude-api",
    "doc-coauthoring",
    "docx",
    "frontend-design",
    "internal-comms",
    "mcp-builder",
    "pdf",
    "pptx",
    "skill-creator",
    "slack-gif-creator",
    "theme-factory",
    "web-artifacts-builder",
    "webapp-testing",
    "xlsx",
    "template-skill",
    "brainstorming",
    "writing-plans",
    "executing-plans",
    "test-driven-development",
    "systematic-debugging",
    "verification-before-completion",
    "requesting-code-review",
    "receiving-code-review",
    "using-git-worktrees",
    "subagent-driven-development",
    "dispatching-parallel-agents",
    "finishing-a-development-branch",
    "writing-skills",
    "using-superpowers",
    "react-best-practices",
    "web-design-guidelines",
    "find-skills",
    "agent-browser",
    "remotion-best-practices",
    "playwright",
    "gh-fix-ci",
    "gh-address-comments",
    "notion",
    "linear",
    "figma",
    "sentry",
    "vercel-deploy",
    "supabase",
    "stripe",
];

/// The well-known skill `name` imitates, if it is a near miss of one: one edit from a name
/// of five letters or more (a digit or `x` suffix is a variant, not a miss), a swap of two
/// neighbours in a shorter one, or equal to one once look-alike characters are folded.
pub(crate) fn skill_typosquat_of(name: &str) -> Option<&'static str> {
    let name = name.trim().to_lowercase();
    if name.len() < 3 || name.len() > 64 || SKILLS.contains(&name.as_str()) {
        return None;
    }
    let folded = fold_homoglyphs(&name);
    SKILLS.iter().copied().find(|real| {
        if folded == *real {
            return true;
        }
        if real.len().abs_diff(name.len()) > 1 || distance(&name, real) != 1 {
            return false;
        }
        if name.starts_with(real)
            && name[real.len()..]
                .chars()
                .all(|c| c.is_ascii_digit() || c == 's' || c == '-')
        {
            return false;
        }
        // a short name differs from another short word by one letter often: only a swap
        // of two of its letters counts
        real.len() >= 5 || {
            let mut a: Vec<char> = name.chars().collect();
            let mut b: Vec<char> = real.chars().collect();
            a.sort_unstable();
            b.sort_unstable();
            a == b
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses() {
        for (m, n, of) in [
            ("pip", "reqeusts", "requests"),
            ("pip", "requestss", "requests"),
            ("pip", "numpyy", "numpy"),
            ("pip", "pandsa", "pandas"),
            ("pip", "beautifulsoup", "beautifulsoup4"),
            ("npm", "lodahs", "lodash"),
            ("npm", "expresss", "express"),
            ("npm", "axois", "axios"),
            ("pip", "requ3sts", "requests"),
            ("npm", "colorsss", "colors"),
            ("npm", "chalk-next", "chalk"),
            ("pip", "patched-requests", "requests"),
            ("npm", "@babeljs/core", "@babel"),
            ("npm", "@typescript_eslint/parser", "@typescript-eslint"),
            ("npm", "@tanstak/react-query", "@tanstack"),
            ("npm", "с\u{0}".trim_end_matches('\0'), ""),
        ] {
            if of.is_empty() {
                continue;
            }
            assert_eq!(typosquat_of(m, n), Some(of), "{n}");
        }
        for (m, n) in [
            ("pip", "requests"),
            ("pip", "python_dateutil"),
            ("pip", "boto3"),
            ("pip", "PyYAML"),
            ("pip", "requests==2.31.0"),
            ("npm", "lodash@4.17.21"),
            ("pip", "torchx"),
            ("pip", "scipy"),
            ("npm", "react-dom"),
            ("pip", "pydantic-settings"),
            ("npm", "chalk-template"),
            ("npm", "@babel/core"),
            ("npm", "@acme/babel"),
            ("npm", "@types/node"),
            ("npm", "@aws-cdk/core"),
            ("npm", "@nuxt/kit"),
            ("npm", "next"),
            ("pip", "requests-toolbelt"),
        ] {
            assert_eq!(typosquat_of(m, n), None, "{n}");
        }
        assert!(looks_internal("acme-internal-utils") && !looks_internal("requests"));
        for (n, of) in [
            ("skill-creater", "skill-creator"),
            ("frontend-desing", "frontend-design"),
            ("xslx", "xlsx"),
            ("mcp-bulder", "mcp-builder"),
        ] {
            assert_eq!(skill_typosquat_of(n), Some(of), "{n}");
        }
        for n in [
            "skill-creator",
            "pdf-forms",
            "pdf2",
            "docs",
            "my-skill",
            "brand",
        ] {
            assert_eq!(skill_typosquat_of(n), None, "{n}");
        }
    }
}
