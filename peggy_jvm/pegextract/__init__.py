"""The PEG adapter of extraction: a saturated E-PEG as an extraction problem, and the extracted selection back
as a checked PEG (DESIGN section 4).

``peg_problem``  saturated e-graph -> :class:`~peggy_jvm.extract.problem.ExtractionProblem`; selection -> PEG
``cost``         the PEG cost model (docs/cost-model.md), for the speed and the size goals
``phi_profile``  the phi-profile validity checker (Stepp 2011, section 8.7)
``tiebreak``     :func:`~.tiebreak.break_ties`: among equally cheap selections, the smaller code
``select``       :func:`~.select.extract_peg`: MaxSAT with the checker and blocking clauses, greedy fallback,
                 the tie-break, the original kept unless strictly cheaper

The generic engine it drives (model, greedy, shrinking, MaxSAT) is :mod:`peggy_jvm.extract`, which knows
nothing of PEGs; this package is the only place the two meet.
"""
