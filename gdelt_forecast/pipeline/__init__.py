"""The pipeline: every stage declared once (:mod:`.stages`, with the parameters of
:mod:`.parameters`), the one way a stage runs (:mod:`.runner`), its records
(:mod:`.stage_record`), and the docs made from the declarations and the config
(:mod:`.docs_pages`). It knows the stages by their declarations and imports none of them."""
