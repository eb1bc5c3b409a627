#!/bin/sh
# The task container's first process: start the web app (it reads and removes the state key before
# it listens) and the browser service, wait until both answer, then run the container's command.
mkdir -p /var/log/aes /tmp/aes-browser
python3 /opt/aes/webapp.py serve --app "${AES_APP:?AES_APP names the app}" --seed /opt/aes/seed.sql \
    --port "${AES_PORT:-8080}" >/var/log/aes/app.log 2>&1 &
HOME=/tmp/aes-browser python3 /opt/aes/browser.py serve >/var/log/aes/browser.log 2>&1 &
port=$(printf '%04X' "${AES_PORT:-8080}")
i=0
while [ $i -lt 200 ]; do
    if [ ! -e /etc/aes-app/state.key ] && [ -S /run/aes-browser/browser.sock ] \
        && grep -q ":$port 00000000:0000 0A" /proc/net/tcp 2>/dev/null; then
        break
    fi
    sleep 0.05
    i=$((i + 1))
done
exec "$@"
