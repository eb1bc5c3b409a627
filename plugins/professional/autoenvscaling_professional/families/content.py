"""Plausible business content, drawn from a generator's own ``random.Random``.

Names, companies, addresses, products, expense categories and money amounts that read like a real
small company's records. Everything is deterministic given the generator's rng.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

FIRST = ("Ava Liam Noah Emma Olivia Lucas Mia Ethan Amara Hiro Sofia Mateo Priya Omar Chloe Jonas Freya Ravi "
         "Elena Tomas Nadia Kofi Ingrid Luis Mei Aisha Daniel Grace Henrik Zara Felix Leila Marco Yuki Nora "
         "Samuel Ines Victor Hannah Arjun Clara Dmitri Fatima Jakob Lucia Oscar Rosa Tariq Vera Wen").split()
LAST = ("Smith Garcia Chen Okafor Novak Rossi Tanaka Müller Johansson Patel Kowalski Dubois Haddad Silva "
        "Andersen Kim Murphy Fischer Moreau Costa Nakamura Jensen Ivanova Mendes Schmidt Lindqvist Brennan "
        "Okonkwo Horvat Laurent Yamamoto Ortiz Bianchi Sato Walsh Keller Duarte Nieminen Abbott Castillo "
        "Fernandes Hughes Larsen Petrov Quinn Romero Stewart Varga Weber Young").split()
COMPANY_A = ("Northwind Bluefield Harbor Summit Cedar Ironwood Lakeside Redstone Silverline Oakridge "
             "Brightwater Granite Maple Pioneer Riverbend Stonegate Westbrook Evergreen Copperfield Highland").split()
COMPANY_B = ("Supplies Logistics Consulting Analytics Foods Print Works Systems Partners Traders Labs "
             "Office Solutions Electrical Catering Freight Media Software Services Interiors").split()
SUFFIX = ("Ltd", "LLC", "Inc.", "GmbH", "Co.", "& Sons", "Group", "AB")
STREETS = ("Market Street", "Station Road", "Elm Avenue", "King's Way", "Harbour Lane", "Mill Road",
           "Church Street", "Park Avenue", "Queen Street", "Bridge Road", "Victoria Street", "High Street")
CITIES = (("Leeds", "LS1"), ("Bristol", "BS1"), ("Portland", "97204"), ("Austin", "78701"),
          ("Dublin", "D02"), ("Toronto", "M5V"), ("Denver", "80202"), ("Glasgow", "G1"),
          ("Madison", "53703"), ("Raleigh", "27601"), ("Cork", "T12"), ("Ottawa", "K1P"))
DEPARTMENTS = ("Sales", "Marketing", "Finance", "Operations", "Engineering", "Support", "HR", "Legal")
REGIONS = ("North", "South", "East", "West", "Central")
EXPENSE_CATEGORIES = ("Rent", "Payroll", "Software", "Travel", "Office Supplies", "Utilities",
                      "Marketing", "Insurance", "Training", "Equipment", "Catering", "Legal Fees")
PRODUCTS = ("Desk Lamp", "Ergonomic Chair", "Standing Desk", "Monitor Arm", "USB-C Dock", "Webcam",
            "Headset", "Keyboard", "Mouse", "Laptop Stand", "Whiteboard", "Filing Cabinet", "Printer Paper",
            "Toner Cartridge", "Desk Organizer", "Cable Kit", "Notebook Pack", "Coffee Machine")
SERVICES = ("Consulting hours", "Website maintenance", "Cloud hosting", "Annual support plan",
            "Data migration", "Training workshop", "Security audit", "Design retainer", "Translation",
            "Courier services", "Cleaning services", "Equipment lease")
EMAIL_DOMAINS = ("example.com", "example.org", "mail.example.net", "corp.example", "example.co.uk")


@dataclass(frozen=True)
class Person:
    first: str
    last: str
    email: str
    phone: str
    company: str
    city: str
    street: str
    postcode: str

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def address(self) -> str:
        return f"{self.street}, {self.city} {self.postcode}"


def ascii_fold(text: str) -> str:
    return text.translate(str.maketrans("üöäéèáíóúñçÜÖÄ", "uoaeeaiounçUOA")).replace("ç", "c")


def company(rng: random.Random) -> str:
    return f"{rng.choice(COMPANY_A)} {rng.choice(COMPANY_B)} {rng.choice(SUFFIX)}"


def companies(rng: random.Random, n: int) -> list[str]:
    seen: list[str] = []
    while len(seen) < n:
        name = company(rng)
        if name.split()[0] not in {s.split()[0] for s in seen} or len(seen) >= len(COMPANY_A):
            seen.append(name)
    return seen


def phone(rng: random.Random) -> str:
    return f"+1 555 {rng.randint(100, 999)} {rng.randint(1000, 9999)}"


def people(rng: random.Random, n: int, *, firms: list[str] | None = None) -> list[Person]:
    """``n`` people with distinct full names and e-mail addresses."""
    out: list[Person] = []
    names: set[tuple[str, str]] = set()
    firms = firms or companies(rng, max(3, n // 3))
    while len(out) < n:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        if (first, last) in names:
            continue
        names.add((first, last))
        firm = rng.choice(firms)
        city, postcode = rng.choice(CITIES)
        domain = firm.split()[0].lower() + "." + rng.choice(EMAIL_DOMAINS).split(".", 1)[-1] if rng.random() < 0.6 else rng.choice(EMAIL_DOMAINS)
        email = f"{ascii_fold(first).lower()}.{ascii_fold(last).lower()}@{domain}"
        street = f"{rng.randint(1, 240)} {rng.choice(STREETS)}"
        out.append(Person(first, last, email, phone(rng), firm, city, street, postcode))
    return out


def first_named(rng: random.Random, n: int) -> list[Person]:
    """The people of ``people(rng, n)`` whose first name none before them has: people a brief can call
    by first name."""
    out: list[Person] = []
    for person in people(rng, n):
        if person.first not in {p.first for p in out}:
            out.append(person)
    return out


def money(rng: random.Random, low: float, high: float) -> float:
    """An amount with cents, rounded to 2 places."""
    return round(rng.uniform(low, high), 2)


def day_in(rng: random.Random, year: int, month: int) -> dt.date:
    first = dt.date(year, month, 1)
    nxt = dt.date(year + (month == 12), month % 12 + 1, 1)
    return first + dt.timedelta(days=rng.randrange((nxt - first).days))


def period(rng: random.Random) -> tuple[int, int]:
    """A (year, month) for the task's books: fixed range, so tasks never depend on today's date."""
    return rng.choice((2024, 2025, 2026)), rng.randint(1, 12)


MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")


def month_name(month: int) -> str:
    return MONTHS[month - 1]


def long_date(d: dt.date, style: str = "dmy") -> str:
    """The date written out: 4 March 2025 ("dmy") or March 4, 2025 ("mdy")."""
    month = month_name(d.month)
    return f"{d.day} {month} {d.year}" if style == "dmy" else f"{month} {d.day}, {d.year}"


def fmt_money(value: float, symbol: str = "$") -> str:
    sign = "-" if value < 0 else ""
    return f"{sign}{symbol}{abs(value):,.2f}"
