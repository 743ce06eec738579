"""Which databases are a Letta server's and which release made one: the tables memlab reads,
the tables and block columns it cannot do without, and letta 0.16.8's alembic revisions (an
``unknown_schema`` problem row for any other)."""

from __future__ import annotations

from memlab.kinds.letta_server._db import Source
from memlab.store import Problems

__all__ = [
    "REQUIRED_TABLES",
    "LETTA_TABLES",
    "REQUIRED_BLOCK_COLUMNS",
    "ALEMBIC_HEAD_0_16_8",
    "ALEMBIC_REVISIONS_0_16_8",
    "letta_release",
]

#: The tables that make a database a Letta server's; without them it is something else.
REQUIRED_TABLES = ("block", "agents")
#: Every table memlab reads from a Letta server database.
LETTA_TABLES = (
    "organizations",
    "users",
    "agents",
    "block",
    "blocks_agents",
    "block_history",
    "blocks_tags",
    "agents_tags",
    "alembic_version",
)
REQUIRED_BLOCK_COLUMNS = ("id", "label", "value")


def letta_release(src: Source, revision: str | None, problems: Problems, where: str) -> str:
    if src.flavour == "sqlite":
        hidden = "hidden" in src.columns.get("block", [])
        return (
            "letta <= 0.11.7 (SQLite, schema by create_all)"
            if not hidden
            else "letta (SQLite, schema by create_all, with block.hidden)"
        )
    if revision is None:
        problems.add(
            where,
            "unknown_schema",
            "no alembic_version table: not a schema Letta's migrations made; read by column name",
        )
        return "unknown (no alembic_version)"
    if revision == ALEMBIC_HEAD_0_16_8:
        return f"letta 0.16.8 (alembic head {revision})"
    if revision in ALEMBIC_REVISIONS_0_16_8:
        return f"letta <= 0.16.8 (alembic revision {revision})"
    problems.add(
        where,
        "unknown_schema",
        f"alembic revision {revision} is not one of letta 0.16.8's migrations (head "
        f"{ALEMBIC_HEAD_0_16_8}); read by column name, newer columns are ignored",
    )
    return f"unknown (alembic revision {revision})"


#: The revision ids of letta 0.16.8's alembic migrations (its ``alembic/versions``; the release
#: ships them outside the wheel), to tell a schema memlab knows from a newer or foreign one.
ALEMBIC_HEAD_0_16_8 = "1c28e167b74f"
ALEMBIC_REVISIONS_0_16_8 = frozenset(
    """
0335b1eb9c40 038e68cdf0df 05c3bc564286 066857381578 068588268b02 06fbbf65d4f1 08b2f8225812
0b496eae90de 0ceb975e0063 15b577c62f3f 167491cfb7a8 175dd10fb916 18e300709530 18ff61fbc034
1af251a42c06 1c28e167b74f 1c6b6a38b713 1c8880d671ee 1dc0fee72dea 1e553a664210 220856bbf43b
22a6e413d89c 25fc99e97839 27de0f58e076 28b8765bdd0a 297e8217e952 2c059cad97cc 2cceb07c2384
2dbb2cf49e07 2e5e90d3cdf8 2f4ede6ae33b 308a180244fc 341068089f14 348214cbc081 373dabcba6cf
39577145c45d 3bc3c031fbe4 3c683a662c82 3d2e9fb40a3c 3e54e2fa2f7e 400501b04bf0 416b9d2db10b
4537f0996495 45402909a46b 46699adc71a7 47d2277e530d 495f3f474131 4c6c9ef0387d 4e88e702f85e
51999513bcf1 539afa667cff 549eff097c71 54c76f7cabca 54dec07619c4 54f2311edb62 56254216524f
567e9fe06270 57bcea83af3f 5973fd8b8c60 5987401b40ae 5b804970e6a0 5d27a719b24d 5fb8bba2c373
60ed28ee7138 614c4e53b66e 61ee53ec45a5 6756d04c3ddb 6c53224a7a58 6fbe9cace832 6fe79c0525f2
74e860718e0d 74f2ede29317 750dd87faa12 7778731d15e2 77de976590ae 7980d239ea08 7b189006c97d
7f652fdd3dba 7f7933666957 8149a781ac1b 82feb220a9b8 878607e41ca4 887a4367b560 88f9432739a9
89b595051e48 89fd4648866b 8d70372ad130 90bb156e71df 90fd814d0cda 915b68780108 9275f62ad282
9556081ce65b 95badb46fdf9 9758adf8fdd3 9792f94e961d 9a505cc7eca9 9ecbdbaa409f 9fa274fb0b83
a08c972e781b a113caac453e a1b2c3d4e5f6 a1b2c3d4e5f7 a1b2c3d4e5f8 a3047a624130 a3c7d62e08ca
a66510f83fc2 a91994b9752f af842aa6f743 b183663c6769 b1c2d3e4f5a6 b2c3d4e5f6a8 b6061da886ee
b6d7ca024aa9 b888f21b151f bdddd421ec41 bff040379479 c0ef3ff26306 c3b1da3d1157 c41c87205254
c4eb5a907b38 c56081a05371 c5d964280dff c6c43222e2de c734cfc0d595 c7ac45f69849 c85a3d07c028
c96263433aef cc8dc340836d cce9a6174366 cda66b6cb0d6 cdb3db091113 cdd4a1c11aee cf3c4d025dbc
d007f4ca66bf d05669b60ebe d06594144ef3 d0880aae6cee d14ae606614c d211df879a5f d5103ee17ed5
d6632deac81d d798609d65ff dd049fbec729 ddb69be34a72 ddecfe4902bc dfafcf8210ca e1a625072dbf
e20573fe9b86 e67961ed7c32 e78b4e82db30 e991d2e3b428 ee2b43eea55e eff256d296cb f2f78d62005c
f3bf00ef6118 f55542f37641 f595e0e8013e f5d26b0526e8 f6cd5a1e519d f7507eab4bb9 f7f757414d20
f81ceea2c08d f895232c144a f922ca16e42c f9ad1c25fd2b fdcdafdb11cf ffb17eb241fc
""".split()
)
