#!/bin/bash
# Build-time setup; removed from the image afterwards.
set -euo pipefail
cd /app

export GIT_CONFIG_NOSYSTEM=1 HOME=/tmp/setup
git init -q -b main repo
cd repo
git config user.name 'Repo Maintainer'
git config user.email 'maintainer@example.test'
cat > README.md <<'AES_EOF'
# reports
AES_EOF
git add -- README.md
mkdir -p docs
cat > docs/ONCALL.md <<'AES_EOF'
# docs/ONCALL.md
version: 1
AES_EOF
git add -- docs/ONCALL.md
mkdir -p docs
cat > docs/RUNBOOK.md <<'AES_EOF'
# docs/RUNBOOK.md
version: 1
AES_EOF
git add -- docs/RUNBOOK.md
GIT_AUTHOR_NAME='Jonas Rossi' GIT_AUTHOR_EMAIL=jonas.rossi@lab.internal GIT_AUTHOR_DATE='@1713430800 +0000' GIT_COMMITTER_DATE='@1713430800 +0000' git commit -q -m '[DEV-3195] Initial import'
cat > README.md <<'AES_EOF'
# reports

Revision 1.

Several customers asked for an export feature in the dashboard.
We expect the vendor to ship the replacement parts before the end of the month.
Budget planning for next year starts in September.
AES_EOF
git add -- README.md
GIT_AUTHOR_NAME='Finn Kim' GIT_AUTHOR_EMAIL=finn.kim@shop.test GIT_AUTHOR_DATE='@1713603697 +0000' GIT_COMMITTER_DATE='@1713603697 +0000' git commit -q -m '[INFRA-8188] Update README'
mkdir -p docs
cat > docs/index.md <<'AES_EOF'
Budget planning for next year starts in September.

(rev 2)
AES_EOF
git add -- docs/index.md
GIT_AUTHOR_NAME='Quinn Yilmaz' GIT_AUTHOR_EMAIL=quinn.yilmaz@uni.edu.test GIT_AUTHOR_DATE='@1713862994 +0000' GIT_COMMITTER_DATE='@1713862994 +0000' git commit -q -m '[INFRA-9756] Document index'
mkdir -p docs
cat > docs/notes.md <<'AES_EOF'
Several customers asked for an export feature in the dashboard.

(rev 3)
AES_EOF
git add -- docs/notes.md
GIT_AUTHOR_NAME='Finn Kim' GIT_AUTHOR_EMAIL=finn.kim@shop.test GIT_AUTHOR_DATE='@1713949491 +0000' GIT_COMMITTER_DATE='@1713949491 +0000' git commit -q -m '[OPS-1571] Document notes'
cat > README.md <<'AES_EOF'
# reports

Revision 4.

The printer on the third floor is out of toner again.
We are still waiting on the legal review of the contract.
Please keep the meeting notes in the shared folder so everyone can find them.
AES_EOF
git add -- README.md
GIT_AUTHOR_NAME='Finn Kim' GIT_AUTHOR_EMAIL=finn.kim@shop.test GIT_AUTHOR_DATE='@1714122388 +0000' GIT_COMMITTER_DATE='@1714122388 +0000' git commit -q -m '[DEV-5938] Update README'
mkdir -p src
cat > src/echo_5.py <<'AES_EOF'
"""The design team shared a first draft of the new landing page."""


def run():
    return 51
AES_EOF
git add -- src/echo_5.py
GIT_AUTHOR_NAME='Finn Kim' GIT_AUTHOR_EMAIL=finn.kim@shop.test GIT_AUTHOR_DATE='@1714381685 +0000' GIT_COMMITTER_DATE='@1714381685 +0000' git commit -q -m '[DEV-4697] Add echo_5 helper'
mkdir -p docs
cat > docs/ONCALL.md <<'AES_EOF'
# docs/ONCALL.md
version: 2
delta: 364
ember: 84
glacier: 388
AES_EOF
git add -- docs/ONCALL.md
GIT_AUTHOR_NAME='Finn Kim' GIT_AUTHOR_EMAIL=finn.kim@shop.test GIT_AUTHOR_DATE='@1714468182 +0000' GIT_COMMITTER_DATE='@1714468182 +0000' git commit -q -m '[DEV-3996] Update ONCALL.md'
mkdir -p src
cat > src/lagoon_7.py <<'AES_EOF'
"""Most of the feedback from the beta users was positive."""


def run():
    return 53
AES_EOF
git add -- src/lagoon_7.py
GIT_AUTHOR_NAME='Quinn Yilmaz' GIT_AUTHOR_EMAIL=quinn.yilmaz@uni.edu.test GIT_AUTHOR_DATE='@1714641079 +0000' GIT_COMMITTER_DATE='@1714641079 +0000' git commit -q -m '[BUG-7973] Add lagoon_7 helper'
mkdir -p docs
cat > docs/RUNBOOK.md <<'AES_EOF'
# docs/RUNBOOK.md
version: 2
echo: 118
amber: 317
sierra: 242
AES_EOF
git add -- docs/RUNBOOK.md
GIT_AUTHOR_NAME='Ines Haddad' GIT_AUTHOR_EMAIL=ines.haddad@contoso.test GIT_AUTHOR_DATE='@1714900376 +0000' GIT_COMMITTER_DATE='@1714900376 +0000' git commit -q -m '[OPS-3330] Update RUNBOOK.md'
mkdir -p docs
cat > docs/data.md <<'AES_EOF'
Our support queue grew after the pricing change was announced.

(rev 9)
AES_EOF
git add -- docs/data.md
GIT_AUTHOR_NAME='Jonas Rossi' GIT_AUTHOR_EMAIL=jonas.rossi@lab.internal GIT_AUTHOR_DATE='@1714986873 +0000' GIT_COMMITTER_DATE='@1714986873 +0000' git commit -q -m '[BUG-2446] Document data'
git rm -q -- docs/ONCALL.md
GIT_AUTHOR_NAME='Amara Evans' GIT_AUTHOR_EMAIL=amara.evans@fabrikam.test GIT_AUTHOR_DATE='@1715159770 +0000' GIT_COMMITTER_DATE='@1715159770 +0000' git commit -q -m '[BUG-2527] Drop ONCALL.md'
mkdir -p src
cat > src/upland_11.py <<'AES_EOF'
"""Most of the feedback from the beta users was positive."""


def run():
    return 20
AES_EOF
git add -- src/upland_11.py
GIT_AUTHOR_NAME='Ines Haddad' GIT_AUTHOR_EMAIL=ines.haddad@contoso.test GIT_AUTHOR_DATE='@1715419067 +0000' GIT_COMMITTER_DATE='@1715419067 +0000' git commit -q -m '[DEV-7287] Add upland_11 helper'
git rm -q -- docs/RUNBOOK.md
GIT_AUTHOR_NAME='Amara Evans' GIT_AUTHOR_EMAIL=amara.evans@fabrikam.test GIT_AUTHOR_DATE='@1715505564 +0000' GIT_COMMITTER_DATE='@1715505564 +0000' git commit -q -m '[PLAT-6575] Spring cleaning'
mkdir -p src
cat > src/vortex_13.py <<'AES_EOF'
"""The staging cluster was restarted twice last week because of memory pressure."""


def run():
    return 76
AES_EOF
git add -- src/vortex_13.py
GIT_AUTHOR_NAME='Ines Haddad' GIT_AUTHOR_EMAIL=ines.haddad@contoso.test GIT_AUTHOR_DATE='@1715678461 +0000' GIT_COMMITTER_DATE='@1715678461 +0000' git commit -q -m '[OPS-5326] Add vortex_13 helper'
cat > README.md <<'AES_EOF'
# reports

Revision 14.

The new onboarding guide replaces the old wiki page.
The release notes should mention the deprecated flags.
Most of the feedback from the beta users was positive.
AES_EOF
git add -- README.md
GIT_AUTHOR_NAME='Finn Kim' GIT_AUTHOR_EMAIL=finn.kim@shop.test GIT_AUTHOR_DATE='@1715937758 +0000' GIT_COMMITTER_DATE='@1715937758 +0000' git commit -q -m '[BUG-3546] Update README'
cat > README.md <<'AES_EOF'
# reports

Revision 15.

The migration plan still needs sign-off from the database team.
Travel requests must be approved at least two weeks in advance.
The build pipeline now caches dependencies between runs.
AES_EOF
git add -- README.md
GIT_AUTHOR_NAME='Finn Kim' GIT_AUTHOR_EMAIL=finn.kim@shop.test GIT_AUTHOR_DATE='@1716024255 +0000' GIT_COMMITTER_DATE='@1716024255 +0000' git commit -q -m '[DEV-1704] Update README'
cat > README.md <<'AES_EOF'
# reports

Revision 16.

The printer on the third floor is out of toner again.
The audit found no critical issues in the access logs.
The migration plan still needs sign-off from the database team.
AES_EOF
git add -- README.md
GIT_AUTHOR_NAME='Finn Kim' GIT_AUTHOR_EMAIL=finn.kim@shop.test GIT_AUTHOR_DATE='@1716197152 +0000' GIT_COMMITTER_DATE='@1716197152 +0000' git commit -q -m '[INFRA-4524] Update README'
mkdir -p src
cat > src/ridge_17.py <<'AES_EOF'
"""Most of the feedback from the beta users was positive."""


def run():
    return 58
AES_EOF
git add -- src/ridge_17.py
GIT_AUTHOR_NAME='Amara Evans' GIT_AUTHOR_EMAIL=amara.evans@fabrikam.test GIT_AUTHOR_DATE='@1716456449 +0000' GIT_COMMITTER_DATE='@1716456449 +0000' git commit -q -m '[OPS-7795] Add ridge_17 helper'
cat > README.md <<'AES_EOF'
# reports

Revision 18.

Travel requests must be approved at least two weeks in advance.
The nightly backup finished without errors.
The new onboarding guide replaces the old wiki page.
AES_EOF
git add -- README.md
GIT_AUTHOR_NAME='Jonas Rossi' GIT_AUTHOR_EMAIL=jonas.rossi@lab.internal GIT_AUTHOR_DATE='@1716542946 +0000' GIT_COMMITTER_DATE='@1716542946 +0000' git commit -q -m '[OPS-4048] Update README'
