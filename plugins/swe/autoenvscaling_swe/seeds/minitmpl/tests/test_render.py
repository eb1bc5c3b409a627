import pytest

from minitmpl import BUILTIN_FILTERS, Markup, Template, TemplateRuntimeError, Undefined, UndefinedError, render
from minitmpl.template import Context, Loop


def test_plain_text_passes_through():
    assert render("just text") == "just text"


def test_variable_substitution():
    assert render("Hi {{ name }}!", name="Bob") == "Hi Bob!"


def test_context_mapping_and_keywords_merge():
    assert render("{{ a }}{{ b }}", {"a": 1, "b": 2}, b=3) == "13"


def test_missing_variable_renders_empty():
    assert render("[{{ ghost }}]") == "[]"


def test_comment_is_removed():
    assert render("a{# note #}b") == "ab"


def test_if_true_branch():
    assert render("{% if flag %}on{% endif %}", flag=True) == "on"


def test_if_false_without_else():
    assert render("{% if flag %}on{% endif %}", flag=False) == ""


def test_if_else_branch():
    assert render("{% if flag %}on{% else %}off{% endif %}", flag=False) == "off"


def test_elif_branch_taken():
    source = "{% if n > 10 %}big{% elif n > 5 %}mid{% else %}small{% endif %}"
    assert render(source, n=7) == "mid"


def test_first_matching_branch_wins():
    source = "{% if n > 1 %}a{% elif n > 0 %}b{% endif %}"
    assert render(source, n=5) == "a"


def test_else_after_elifs():
    source = "{% if n > 10 %}big{% elif n > 5 %}mid{% else %}small{% endif %}"
    assert render(source, n=1) == "small"


def test_nested_if():
    source = "{% if a %}{% if b %}ab{% else %}a{% endif %}{% endif %}"
    assert render(source, a=True, b=False) == "a"


def test_for_loop():
    assert render("{% for x in items %}{{ x }};{% endfor %}", items=[1, 2, 3]) == "1;2;3;"


def test_for_else_on_empty():
    assert render("{% for x in items %}{{ x }}{% else %}empty{% endfor %}", items=[]) == "empty"


def test_for_else_on_missing():
    assert render("{% for x in ghost %}{{ x }}{% else %}empty{% endfor %}") == "empty"


def test_for_over_none_is_empty():
    assert render("{% for x in items %}{{ x }}{% endfor %}", items=None) == ""


def test_for_else_skipped_when_items_exist():
    assert render("{% for x in items %}{{ x }}{% else %}empty{% endfor %}", items=[0]) == "0"


def test_loop_object_index():
    assert (Loop(0, 3).index, Loop(2, 3).index) == (1, 3)


def test_loop_object_index0():
    assert Loop(2, 3).index0 == 2


def test_loop_object_revindex():
    assert (Loop(0, 3).revindex, Loop(2, 3).revindex) == (3, 1)


def test_loop_object_length():
    assert Loop(1, 4).length == 4


def test_loop_object_first():
    assert Loop(0, 3).first and not Loop(1, 3).first


def test_loop_object_last():
    assert Loop(2, 3).last and not Loop(1, 3).last


def test_loop_object_single_item_is_first_and_last():
    loop = Loop(0, 1)
    assert loop.first and loop.last


def test_loop_index_in_template():
    assert render("{% for x in items %}{{ loop.index }}{% endfor %}", items="abc") == "123"


def test_loop_last_in_template():
    source = "{% for x in items %}{{ x }}{% if not loop.last %}, {% endif %}{% endfor %}"
    assert render(source, items=["a", "b", "c"]) == "a, b, c"


def test_context_resolves_innermost_scope():
    ctx = Context({"a": 1}, BUILTIN_FILTERS)
    ctx.scopes.append({"a": 2})
    assert ctx.resolve("a") == 2


def test_context_falls_back_to_outer_scope():
    ctx = Context({"a": 1}, BUILTIN_FILTERS)
    ctx.scopes.append({"b": 2})
    assert ctx.resolve("a") == 1


def test_context_missing_name_is_undefined():
    assert isinstance(Context({}, BUILTIN_FILTERS).resolve("a"), Undefined)


def test_context_strict_missing_name_raises():
    with pytest.raises(UndefinedError):
        Context({}, BUILTIN_FILTERS, strict=True).resolve("a")


def test_for_two_targets_over_dict():
    assert render("{% for k, v in d %}{{ k }}={{ v }};{% endfor %}", d={"a": 1, "b": 2}) == "a=1;b=2;"


def test_for_single_target_over_dict_gives_keys():
    assert render("{% for k in d %}{{ k }}{% endfor %}", d={"a": 1, "b": 2}) == "ab"


def test_for_two_targets_over_pairs():
    assert render("{% for a, b in pairs %}{{ a }}{{ b }} {% endfor %}", pairs=[(1, 2), (3, 4)]) == "12 34 "


def test_for_unpack_mismatch():
    with pytest.raises(TemplateRuntimeError):
        render("{% for a, b in items %}{% endfor %}", items=[(1, 2, 3)])


def test_nested_loops_have_own_loop_variable():
    source = "{% for a in outer %}{% for b in inner %}{{ loop.index }}{% endfor %}|{% endfor %}"
    assert render(source, outer=[1, 2], inner=["x", "y"]) == "12|12|"


def test_loop_variable_does_not_leak():
    assert render("{% for x in items %}{% endfor %}[{{ x }}]", items=[1, 2], x="outer") == "[outer]"


def test_inner_scope_sees_outer_variables():
    assert render("{% for x in items %}{{ sep }}{{ x }}{% endfor %}", items=[1, 2], sep="-") == "-1-2"


def test_whitespace_control_in_loop():
    source = "<ul>\n{%- for x in items %}\n  <li>{{ x }}</li>\n{%- endfor %}\n</ul>"
    assert render(source, items=[1, 2]) == "<ul>\n  <li>1</li>\n  <li>2</li>\n</ul>"


def test_whitespace_control_after_tag():
    assert render("{% if true -%}   \n  x{% endif %}") == "x"


def test_autoescape_off_by_default():
    assert render("{{ v }}", v="<b>") == "<b>"


def test_autoescape_escapes_output():
    assert Template("{{ v }}", autoescape=True).render(v="<b>&") == "&lt;b&gt;&amp;"


def test_autoescape_leaves_markup():
    assert Template("{{ v }}", autoescape=True).render(v=Markup("<b>")) == "<b>"


def test_autoescape_does_not_touch_literal_text():
    assert Template("<p>{{ v }}</p>", autoescape=True).render(v="&") == "<p>&amp;</p>"


def test_escape_filter_not_double_escaped():
    assert Template("{{ v|escape }}", autoescape=True).render(v="<") == "&lt;"


def test_autoescape_render_returns_markup():
    assert isinstance(Template("x", autoescape=True).render(), Markup)


def test_strict_mode_raises_for_missing_variable():
    with pytest.raises(UndefinedError):
        Template("{{ ghost }}", strict=True).render()


def test_strict_mode_raises_for_missing_attribute():
    with pytest.raises(UndefinedError) as info:
        Template("{{ user.age }}", strict=True).render(user={"name": "x"})
    assert "'user.age'" in str(info.value)


def test_strict_mode_names_first_missing_segment():
    with pytest.raises(UndefinedError) as info:
        Template("{{ user.address.city }}", strict=True).render(user={})
    assert "'user.address'" in str(info.value)


def test_strict_mode_allows_present_values():
    assert Template("{{ user.name }}", strict=True).render(user={"name": "x"}) == "x"


def test_template_is_reusable():
    t = Template("{{ n }}")
    assert [t.render(n=1), t.render(n=2)] == ["1", "2"]
