"""Post-processors: what ``add_special_tokens=True`` puts around the ids.

>>> from fasttok.post_processors.special_ids import AddSpecialIds
>>> AddSpecialIds(head=(1,), tail=(2,))([5, 6])
[1, 5, 6, 2]
"""
