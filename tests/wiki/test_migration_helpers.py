"""The upgrade's data migrations: entity keys refolded, sections indexed again."""

from almanac.migration_helpers import reindex_changed_text
from tests.wiki.conftest import slack
from wiki import matching, services
from wiki.migration_helpers import refold_entity_keys
from wiki.models import Entity, PageSection


def test_the_upgrade_folds_and_indexes_traditional_chinese_written_before_it(tenant, push):
    push(slack("華為 asked for the installer", tags={"customer": "華為"}))
    entity = Entity.objects.get(kind="customer")
    services.entity_update(entity=entity, aliases=["華為技術", "Huawei"])
    section = PageSection.objects.get(page__entity=entity)
    assert entity.key == "华为" and "华为" in section.tokens.split()
    # As the release before folded and indexed them: traditional characters kept.
    Entity.objects.filter(pk=entity.pk).update(key="華為", alias_keys=["huawei", "華為", "華為技術"])
    PageSection.objects.filter(pk=section.pk).update(tokens=section.tokens.replace("华为", "華為"))
    assert refold_entity_keys(Entity) == 1
    changed = reindex_changed_text(
        PageSection,
        corpus="wiki",
        text=lambda s: f"{s.page.title}\n{s.title}\n{s.content}",
        related=("page",),
    )
    assert changed == 1
    entity.refresh_from_db()
    section.refresh_from_db()
    assert entity.key == "华为" and {"華為", "华为", "huawei"} <= set(entity.alias_keys)
    assert "华为" in section.tokens.split() and "華為" not in section.tokens
    # Text in either script finds it again, and a tag in either spelling is the same entity.
    matching.entities_changed(tenant.pk)
    for text in ("華為的合同", "华为的合同"):
        assert [e.pk for e in matching.entities_in_text(tenant=tenant, text=text)] == [entity.pk], text
    assert services.entity_ensure(tenant=tenant, kind="customer", name="華為") == entity


def test_the_upgrade_reads_the_whole_keyword_text_as_the_segmenter_now_does(tenant, push):
    """A page title in traditional characters, a full-width thousands separator."""
    push(slack("MediaTek quoted 1，200 units", tags={"customer": "聯發科"}))
    section = PageSection.objects.get()
    assert {"联发科", "1200"} <= set(section.tokens.split())
    PageSection.objects.filter(pk=section.pk).update(tokens="聯發科 mediatek quot 1 200 unit")  # as before
    changed = reindex_changed_text(
        PageSection,
        corpus="wiki",
        text=lambda s: f"{s.page.title}\n{s.title}\n{s.content}",
        related=("page",),
    )
    section.refresh_from_db()
    assert changed == 1 and {"联发科", "1200"} <= set(section.tokens.split())
