# scripts/setup.sh: shared by scripts/demo and scripts/test (sourced, not run). Installs what a fresh
# Debian 12 machine lacks, then configures and builds a release build in build/.
# Idempotent: with everything installed and built it costs a few dpkg queries and a no-op ninja.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
strata_install_packages
strata_build build --buildtype=release
