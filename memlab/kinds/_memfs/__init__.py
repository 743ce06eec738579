"""The markdown-in-git family shared by three store kinds (``letta_memfs``, ``souveraine``,
``elfmem_substrate``): one loader and one audit, private to memlab.kinds.

* :mod:`._load`: :func:`load_memfs` and the public calls on a memory repository (was
  ``memlab.sources.memfs``); :mod:`._locate` finds the repository, its layout and Letta's
  evidence; :mod:`._read` reads a commit's or a folder's files; :mod:`._files` is the files
  frame and what a path is under each layout;
* :mod:`._audit`: :func:`audit_memfs` (was ``memlab.audits.memfs``), with its tables in
  :mod:`._checks`, :mod:`._churn`, :mod:`._audit_constraints`, :mod:`._audit_files`,
  :mod:`._prompt` and :mod:`._report`;
* :mod:`._integrity`: a repository whose history is not what it seems (reflogs in
  :mod:`._integrity_reflog`, the commit graph in :mod:`._integrity_graph`), for
  :func:`memlab.audits._integrity.memfs_integrity`.

Each kind's own pieces are in its package (``memlab/kinds/letta_memfs/``, ...). Nothing is
imported here, so reading one module does not load the family.
"""

__all__: list[str] = []
