#!/bin/sh
# AutoEnvScaling offline verifier: the local stand-in for https://astral.sh/uv/<version>/install.sh.
#
# Lays out what the real installer does: `uv` and `uvx` in $HOME/.local/bin (or $UV_INSTALL_DIR,
# $XDG_BIN_HOME) and an `env` script there that puts that directory on PATH, so `source
# $HOME/.local/bin/env` works. The commands it installs forward to the offline verifier's uv shim,
# which runs tools from the packages provisioned on the host (no network, no downloads).
set -eu
root="__RUNTIME_ROOT__"
home=${HOME:-/root}
dir=${UV_INSTALL_DIR:-${XDG_BIN_HOME:-$home/.local/bin}}
mkdir -p "$dir"
for tool in uv uvx; do
    printf '#!/bin/sh\nexec "%s/bin/%s" "$@"\n' "$root" "$tool" > "$dir/$tool"
    chmod 755 "$dir/$tool"
done
cat > "$dir/env" <<ENV
#!/bin/sh
# Put $dir on PATH once (written by the AutoEnvScaling offline uv installer).
case ":\${PATH}:" in
    *:"$dir":*) ;;
    *) export PATH="$dir:\$PATH" ;;
esac
ENV
echo "downloading uv (offline verifier: using the local uv shim, no download)"
echo "installing to $dir"
echo "  uv"
echo "  uvx"
echo "everything's installed!"
