"""Names, companies, cities and words the generators draw from (made up; no real people)."""

FIRST = ["Ada", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hugo", "Ingrid", "Jonas", "Keiko", "Liam",
         "Maya", "Nikolai", "Olga", "Pavel", "Quinn", "Rosa", "Samir", "Tara", "Ulrich", "Vera", "Wen", "Ximena",
         "Yusuf", "Zofia", "Anton", "Beatriz", "Carlos", "Daria", "Emil", "Fatima", "Gustav", "Hana", "Ivan", "Julia"]
LAST = ["Lindqvist", "Moreau", "Novak", "Okafor", "Petrov", "Quintero", "Rossi", "Sato", "Tanaka", "Ueda", "Varga",
        "Weber", "Xu", "Yilmaz", "Zeller", "Andersen", "Becker", "Castillo", "Dubois", "Eriksen", "Fischer",
        "Garcia", "Horvat", "Ibarra", "Jansen", "Kowalski", "Larsen", "Meyer", "Nilsen", "Olsen"]
COMPANIES = ["Northwind Traders", "Bluefin Logistics", "Cedar & Pine", "Helios Analytics", "Ironclad Tools",
             "Juniper Health", "Kestrel Labs", "Lumen Studio", "Maple Freight", "Nimbus Software", "Orchid Foods",
             "Pioneer Energy", "Quartz Media", "Redwood Legal", "Summit Outdoor", "Tidewater Marine"]
CITIES = ["Lisbon", "Porto", "Madrid", "Lyon", "Graz", "Ghent", "Bergen", "Tampere", "Krakow", "Brno", "Turin",
          "Leipzig", "Aarhus", "Utrecht", "Cork", "Bilbao"]


def email_of(first: str, last: str, company: str) -> str:
    domain = "".join(ch for ch in company.lower().split()[0] if ch.isalnum()) + ".example"
    return f"{first.lower()}.{last.lower()}@{domain}"


def phone_of(rng) -> str:  # noqa: ANN001 - random.Random
    return f"+351 2{rng.randint(10, 99)} {rng.randint(100, 999)} {rng.randint(100, 999)}"
