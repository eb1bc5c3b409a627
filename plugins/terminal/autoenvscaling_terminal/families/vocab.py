"""Word lists the generators draw names and text from (plain data, no logic)."""

FIRST_NAMES = [
    "alice", "bruno", "chen", "dana", "emeka", "farah", "gus", "hana", "ivan", "jun", "kofi", "lena", "mateo",
    "nadia", "omar", "priya", "quinn", "rosa", "sven", "tariq", "uma", "viktor", "wen", "ximena", "yusuf", "zoe",
    "amara", "bodhi", "carmen", "dmitri", "elif", "finn", "greta", "hugo", "ines", "jonas", "kai", "lucia",
]
SURNAMES = [
    "adams", "baker", "costa", "diaz", "evans", "fischer", "garcia", "haddad", "ito", "jensen", "kim", "lopez",
    "moreau", "nakamura", "okafor", "patel", "quiroga", "rossi", "schmidt", "tanaka", "ueda", "vasquez", "weber",
    "xu", "yilmaz", "zhang", "novak", "olsen", "petrov", "silva",
]
CITIES = [
    "Lisbon", "Osaka", "Nairobi", "Toronto", "Krakow", "Austin", "Lyon", "Pune", "Bergen", "Cordoba", "Dublin",
    "Hanoi", "Leeds", "Quito", "Tartu", "Utrecht", "Valencia", "Windhoek", "Zagreb", "Brisbane", "Accra", "Bilbao",
]
REGIONS = ["north", "south", "east", "west", "central", "coastal", "mountain", "islands", "metro", "rural"]
COMPANIES = ["acme", "globex", "initech", "umbrella", "hooli", "vandelay", "stark", "wayne", "tyrell", "wonka",
             "cyberdyne", "soylent", "oscorp", "aperture", "monarch", "gringotts", "nakatomi", "duff"]
EMAIL_DOMAINS = ["example.org", "mail.test", "corp.invalid", "lab.internal", "uni.edu.test", "shop.test",
                 "ops.example.net", "dev.local.test", "contoso.test", "fabrikam.test"]
PRODUCTS = [
    "anchor bolt", "brass hinge", "cable tie", "desk lamp", "ethernet cable", "fan belt", "gear oil", "hex key",
    "ink cartridge", "jumper wire", "kettle", "lens cap", "mouse pad", "nail gun", "oil filter", "paint roller",
    "quartz clock", "router", "solder wire", "tape measure", "usb hub", "voltmeter", "wall plug", "xlr cable",
    "yoga mat", "zip bag", "air pump", "bike light", "coffee grinder", "drill bit", "extension lead", "floor mat",
]
CATEGORIES = ["hardware", "electronics", "office", "kitchen", "outdoor", "garden", "tools", "sports", "cleaning"]
SERVICES = ["auth", "billing", "catalog", "checkout", "gateway", "inventory", "mailer", "notifier", "orders",
            "payments", "reports", "search", "scheduler", "storage", "users", "webhooks", "ledger", "metrics"]
ENDPOINTS = ["/", "/login", "/logout", "/api/items", "/api/items/42", "/api/users", "/api/orders", "/search",
             "/static/app.js", "/static/style.css", "/health", "/admin", "/cart", "/checkout", "/api/v2/stock",
             "/images/logo.png", "/docs", "/api/session", "/feed.xml", "/robots.txt"]
USER_AGENTS = ["curl/8.4.0", "Mozilla/5.0 (X11; Linux x86_64)", "Mozilla/5.0 (Macintosh)", "python-requests/2.31",
               "Go-http-client/1.1", "Wget/1.21", "Mozilla/5.0 (iPhone)", "kube-probe/1.29"]
WORDS = [
    "amber", "basil", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "indigo", "juniper", "kelp",
    "lumen", "maple", "nectar", "onyx", "pepper", "quill", "raven", "saffron", "tundra", "umber", "velvet",
    "willow", "xenon", "yarrow", "zephyr", "atlas", "beacon", "cinder", "dune", "echo", "flint", "glacier",
    "hollow", "iris", "jade", "kestrel", "lagoon", "meadow", "nimbus", "orchid", "prism", "quarry", "ridge",
    "sierra", "thistle", "upland", "vortex", "wharf", "yonder",
]
PROSE = [
    "The quarterly review went smoothly and the team agreed on the next milestones.",
    "Please keep the meeting notes in the shared folder so everyone can find them.",
    "The staging cluster was restarted twice last week because of memory pressure.",
    "We expect the vendor to ship the replacement parts before the end of the month.",
    "Remember that the office is closed on the public holiday.",
    "The migration plan still needs sign-off from the database team.",
    "Most of the feedback from the beta users was positive.",
    "The build pipeline now caches dependencies between runs.",
    "Our support queue grew after the pricing change was announced.",
    "The new onboarding guide replaces the old wiki page.",
    "Several customers asked for an export feature in the dashboard.",
    "The printer on the third floor is out of toner again.",
    "Latency improved after the cache layer was rolled out.",
    "The audit found no critical issues in the access logs.",
    "Travel requests must be approved at least two weeks in advance.",
    "The design team shared a first draft of the new landing page.",
    "We are still waiting on the legal review of the contract.",
    "The nightly backup finished without errors.",
    "Budget planning for next year starts in September.",
    "The release notes should mention the deprecated flags.",
]
FILE_STEMS = ["notes", "report", "draft", "summary", "invoice", "config", "readme", "todo", "backup", "data",
              "export", "index", "log", "memo", "plan", "schema", "sketch", "specs", "status", "ticket"]
DIR_NAMES = ["src", "docs", "assets", "lib", "tools", "scripts", "build", "vendor", "tests", "config", "data",
             "archive", "old", "misc", "reports", "shared", "team", "legacy", "drafts", "exports"]
PERSONAS = [
    "I'm on the platform team", "Our on-call engineer asked for help", "A colleague handed this over before going on leave",
    "We are preparing for an audit", "The operations lead needs this by the end of the day",
    "I'm cleaning up an old server", "A customer support ticket came in", "We're getting ready for a release",
    "The data team asked for a quick answer", "I inherited this machine from another team",
    "Our monitoring flagged something odd", "A new hire is shadowing me on this",
]
