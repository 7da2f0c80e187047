"""Words that carry state, change and intent, in English, Simplified and Traditional
Chinese. Patterns run on `text.norm()` output (lower case, Traditional folded
to Simplified), so each Chinese word is written once, in Simplified."""
from __future__ import annotations

import re

from memgit.text import compile_words

_NEG = r"(?:not|n't|never|no|without|zero|未|没|没有|还没|尚未|不|别|无|零)"


def _re(*alts: str) -> re.Pattern[str]:
    return compile_words("|".join(f"(?:{a})" for a in alts))


# A thing waiting to happen (status words), in rough order of progress.
PENDING = _re(
    r"待\s*(?:push|merge|review|上线|部署|发布|提交|合并|审核|确认|测试)", r"待\s*push",
    r"\bpending(?:\s+(?:push|review|merge|deploy(?:ment)?|release|approval))?\b",
    r"\bplanned\b", r"\bin design\b", r"\bdesigning\b", r"设计中", r"规划中", r"计划中", r"筹备中",
    r"\bin progress\b", r"\bwip\b", r"进行中", r"开发中", r"\bdraft\b", r"草稿", r"未上线", r"未部署",
    r"未发布", r"\bblocked(?:\s+on\s+[\w-]+)?\b", r"\bin review\b",
    r"\bnot (?:yet )?(?:deployed|released|live|shipped)\b",
    r"准备\s*(?:push|发布|上线|部署)", r"\bto be (?:deployed|released|pushed|merged)\b", r"\bqueued\b",
    r"提审中", r"审核中", r"送审中", r"灰度中", r"内测中", r"公测中", r"等\s*(?:review|merge|审核|合并|上线)",
    r"\bunder review\b", r"\bawaiting\b", r"\bwaiting (?:on|for)\b", r"\brolling out\b", r"\bin beta\b",
)
# a thing that waits on something or someone: only its being unblocked (UNBLOCKED) moves it on short of done
BLOCKED = _re(r"\bblocked\b", r"\bwaiting (?:on|for)\b", r"\bawaiting\b", r"卡在", r"卡住", r"阻塞", r"等待")
UNBLOCKED = _re(r"\bunblocked\b", r"\bkicked off\b", r"\bunderway\b", r"解除阻塞", r"不再卡", r"已开工", r"已启动")
TODO = _re(r"\btodo\b", r"\bto-do\b", r"\bto be (?:filled(?: in)?|done|written|decided)\b", r"\bstill to\b",
           r"\bnot started\b", r"待办", r"待填", r"还没开始", r"未开始", r"待补", r"待定")
ERROR = _re(r"\berror(?:ed|s)?\b", r"\bfail(?:ing|ed|s)\b", r"\bbroken\b", r"\bcrash(?:es|ed|ing)?\b",
            r"\b5\d\d\b", r"\btimeouts?\b", r"\btimed out\b", r"超时", r"报错", r"出错", r"挂了", r"故障",
            r"异常", r"待查", r"排查中", r"\bnot working\b", r"\bis down\b", r"\bkeeps? dying\b", r"崩溃")
FIXED = _re(r"\bfixed\b", r"\bresolved\b", r"\bworks? again\b", r"\bworking again\b", r"\bback to normal\b",
            r"\brecovered\b", r"\bno longer (?:errors?|fails?|crash(?:es)?)\b", r"修好", r"已修复", r"修复了",
            r"修复", r"已解决", r"解决了", r"恢复正常", r"恢复了", r"正常了", r"没再报错", r"不再报错")
# the opposite of a failure: what the thing that failed does once it works ("备份成功", "the sync succeeded");
# alone it is no fix (a first success can be luck), so it counts only on two days (memgit.dream.rules.prune)
SUCCEEDED = _re(r"成功", r"\bsucceed(?:ed|s)?\b", r"\bsuccessful(?:ly)?\b")
# Done states: (rank, pattern, canonical English, canonical Chinese); TRADITIONAL spells the latter.
DONE: list[tuple[int, re.Pattern[str], str, str]] = [
    (3, _re(r"上线", r"\bwent live\b", r"\bis (?:now )?live\b", r"\bgo(?:es)? live\b", r"\bin production\b",
            r"\blaunched\b", r"正式发布", r"正式\s*live", r"全量(?:上线|发布|放量)?", r"100%\s*放量"),
     "live", "已上线"),
    (3, _re(r"部署", r"\bdeployed\b", r"\bdeploy(?:ed)? to\b"), "deployed", "已部署"),
    (3, _re(r"\breleased\b", r"\bshipped\b", r"已发布", r"发布了"), "released", "已发布"),
    (2, _re(r"已\s*push", r"\bpushed\b", r"push\s*了"), "pushed", "已 push"),
    (2, _re(r"\bmerged\b", r"已合并", r"合并了", r"已\s*merge", r"merge\s*了", r"已合入"), "merged", "已合并"),
    (1, _re(r"\bdone\b", r"\bfinished\b", r"\bcompleted?\b", r"已完成", r"完成了", r"搞定"), "done", "已完成"),
]
TRADITIONAL = {"已上线": "已上線", "已部署": "已部署", "已发布": "已發布", "已 push": "已 push", "已合并": "已合併",
               "已完成": "已完成"}
NEGATED_BEFORE = compile_words(_NEG + r"\s*\S{0,6}$")

PREFERENCE = _re(r"\bfrom now on\b", r"\bgoing forward\b", r"\bhenceforth\b", r"\bin (?:the )?future\b",
                 r"\bfrom today on\b", r"\bstarting (?:today|now)\b", r"\bno more\b", r"\binstead of\b",
                 r"\bdon'?t \w+ anymore\b", r"\bstop \w+ing\b", r"\bplease always\b", r"\bnever again\b",
                 r"以后", r"今后", r"往后", r"从现在起", r"从今天起", r"不要再", r"别再", r"不再", r"改成",
                 r"改用", r"换成", r"换用", r"改为")
EXCEPTION = _re(r"\bthis week only\b", r"\bonly this week\b", r"\bjust this (?:once|week|time)\b",
                r"\b(?:for )?today only\b", r"\bthis time only\b", r"\bjust for now\b", r"\bone-off\b",
                r"\bthis once\b", r"就这周", r"只这周", r"仅这周", r"本周", r"这周", r"这次", r"这一次",
                r"仅此一次", r"就这一次", r"今天先", r"暂时", r"临时")
SUPERSEDE = _re(r"\bswitched to\b", r"\bswitch(?:ed)? (?:over )?to\b", r"\breplaced (?:by|with)\b",
                r"\bretired\b", r"\bdeprecated\b", r"\bno longer\b", r"\binstead of\b", r"\bmoved to\b",
                r"\bmigrated to\b", r"\bnow uses?\b", r"换成", r"换用", r"改用", r"改为", r"替换", r"弃用",
                r"退役", r"不再用", r"停用", r"迁移到", r"切换到")
# A lesson in its rule form: what to do (a workaround, "always", "记住"), not the complaint that it
# happened again ("又", "again", "第三次" mark recurrence: AGAIN).
RULE = _re(r"\bworkaround\b", r"\bwork around\b", r"\bfix(?:es)? it\b", r"\bfixed it\b", r"\bthe fix is\b",
           r"\bgotcha\b", r"\brule\b", r"\balways\b", r"\bnever\b", r"\bmust\b(?! have\b| be\b)", r"\bremember\b",
           r"\bmake sure\b", r"\bdon'?t forget\b", r"\bsolution\b", r"\bsolved by\b", r"规则", r"原则", r"记住",
           r"注意", r"解决办法", r"办法是", r"绕过", r"规矩", r"一定要", r"必须", r"别忘", r"不要忘", r"要先", r"得先")
# what was done to fix it, which, recurring, is a workaround in all but name
REMEDY = _re(r"\bre-?(?:creat|install|link|add|start|set|run|generat|authenticat)\w*", r"\brestart\w*",
             r"\bsymlink(?:ed)?\b", r"重新", r"重建", r"重装", r"重裝", r"重启", r"重啟", r"重连", r"重連")
AGAIN = _re(r"\bagain\b", r"\b(?:second|third|fourth) time\b", r"\bevery time\b", r"\beach time\b", r"每次",
            r"又", r"再次", r"第[二三四]次", r"坑")
TEMP = _re(r"\btemporary\b", r"\btemp\b", r"\btemporarily\b", r"临时", r"暂时", r"\bfor the demo\b",
           r"\buntil\b", r"到期", r"截止", r"\bexpires?\b", r"\bexpiring\b", r"有效期", r"\bone-off\b")
EXPIRES_IN = re.compile(r"expires?\s+in\s+(\d+)\s*(day|week|month)s?"
                        r"|(\d+)\s*(天|周|个月)\s*(?:后|内)?\s*(?:过期|到期|失效)")
CHATTER = _re(r"\bgood (?:morning|night|evening|afternoon)\b",
              r"^(?:\[[^\]]{1,20}\]\s*)?(?:[\w .-]{1,24}[:：]\s*)?(?:hi|hello|hey|thanks|thank you|bye|yo)\b",
              r"\b(?:good|great|nice) to (?:talk|see|hear from|chat with) you\b", r"\bhow'?s it going\b",
              r"\bweather\b", r"\bhow are you\b", r"\bjust checking\b", r"\bthat'?s all\b", r"早上好", r"早安",
              r"晚安", r"天气", r"闲聊", r"晚饭", r"午饭", r"吃什么", r"周末.{0,6}(?:爬山|出去|休息)", r"降温",
              r"^(?:你好|谢谢|好的|嗯)")
# routine "nothing new" lines: recurring, but nothing to remember
ROUTINE = _re(r"\bnothing (?:new|important|special|unusual|to report|much)\b", r"\ball (?:good|fine|green|quiet)\b",
              r"\bas usual\b", r"\bno (?:issues?|problems?|changes?|news|updates?)\b", r"\bnothing happened\b",
              r"一切正常", r"没什么(?:事|特别|变化)?", r"没啥", r"无事", r"照常", r"如常", r"老样子",
              r"没有变化", r"没变化")
ACK = _re(r"^(?:ok|okay|got it|sure|understood|will do|noted)\b", r"^好的", r"^明白", r"^收到", r"^了解",
          r"^没问题")
# leading words of a log line that say when, not what
DAY_NOISE = re.compile(
    r"^(?:(?:the )?(?:first|second|third|fourth|fifth) time[:,]?\s*|again[:,]?\s*|once more[:,]?\s*|"
    r"又一次[:：,，]?\s*|又[:：,，]?|再次[:：,，]?\s*|第[一二三四五]次[:：,，]?\s*|今天|today[:,]?\s*)", re.I)
STATE_WORDS = compile_words("|".join(p.pattern for p in (PENDING, TODO, ERROR, FIXED, *[d[1] for d in DONE])))


def done_state(text: str) -> tuple[int, str, str, int] | None:
    """The most advanced non-negated done state in `text`: (rank, english, chinese, position)."""
    best = None
    for rank, pat, en, zh in DONE:
        for m in pat.finditer(text):
            if NEGATED_BEFORE.search(text[max(0, m.start() - 8):m.start()]):
                continue
            if best is None or rank > best[0]:
                best = (rank, en, zh, m.start())
            break
    return best


# A state that holds, and the states that end it: (name, holds, ended). An entry saying the first
# whose subject the newest logs report in the second is out of date.
STATE_PAIRS: list[tuple[str, re.Pattern[str], re.Pattern[str]]] = [
    ("connection", _re(r"已连接", r"连接正常", r"已连上", r"(?<!dis)\bconnected\b", r"\bonline\b", r"在线"),
     _re(r"断连", r"断开", r"掉线", r"连不上", r"\bdisconnected\b", r"\boffline\b", r"离线")),
    ("running", _re(r"运行中", r"正常运行", r"\brunning\b", r"\bup and running\b", r"\bworking\b"),
     _re(r"停止运行", r"已停止", r"已停用", r"挂了", r"\bstopped\b", r"\bis down\b", r"\bnot working\b",
         r"\bbroken\b")),
    ("enabled", _re(r"已启用", r"已开启", r"\benabled\b"), _re(r"已禁用", r"已关闭", r"停用", r"\bdisabled\b")),
]
# "still", "again": the ended state persists (one day's report is enough)
PERSISTS = _re(r"仍", r"依然", r"还是", r"一直", r"\bstill\b", r"持续")

# A tool or way of working the person has retired: the entries built around it are out of date.
RETIRED = _re(r"\bnot (?:required|needed|used) any ?more\b", r"\bno longer (?:required|needed|used|in use)\b",
              r"\bretired\b", r"\bdeprecated\b", r"\bshould not be (?:restored|used)\b", r"\bstop(?:ped)? using\b",
              r"不再(?:需要|使用|用)", r"不用了", r"弃用", r"停用", r"退役", r"废弃")
# words a heading uses for any subject ("OpenClaw setup", "Gateway status"): they say which aspect, not
# which one of several things of a kind ("TEG rental OpenClaw instance" names one instance)
GENERIC_HEADING = frozenset("""setup set-up config configur configuration setting settings status state current
overview summary notes note info information detail details version versions instance instances
install installation environment env main primary default general misc other basics reference ref
配置 设置 状态 当前 概览 总结 笔记 信息 详情 版本 实例 安装 环境 主要 默认 其他 参考""".split())
# what the person puts in a retired tool's place ("use plain `gh` only", "改用 `uv`"): group 1 is the tool
REPLACE_WITH = re.compile(r"(?:\buse (?:plain |only |just |the plain )?|\bswitch(?:ed)? to |\bmove(?:d)? to |"
                          r"改用\s*|换成\s*|换用\s*|只用\s*|直接用\s*)`([^`\n]{1,60})`")
# how a log reports what the person said or decided
PERSON_SAID = _re(r"\bsaid\b", r"\btold me\b", r"\basked\b", r"\bclarified\b", r"\bdecided\b", r"\bconfirmed\b",
                  r"\binstructed\b", r"说", r"要求", r"表示", r"决定", r"确认", r"交代")

# A passing condition said of "these days": true when written, stale once the window stops reporting it.
TRANSIENT_SPAN = _re(r"这两天", r"这几天", r"最近几天", r"这阵子", r"这段时间", r"\bthese (?:two |few )?days\b",
                     r"\bthis week\b", r"\bright now\b", r"\bat the moment\b", r"\bfor now\b")
TRANSIENT_STATE = _re(r"(?<![帮幫连連急匆])忙", r"休息", r"生病", r"感冒", r"出差", r"旅行", r"度假", r"休假", r"不在",
                      r"\bbusy\b", r"\bresting\b", r"\bsick\b", r"\bill\b", r"\btravel(?:l)?ing\b",
                      r"\bon (?:vacation|holiday)\b",
                      r"\baway\b", r"\bout of office\b")

# One value moved: the verbs of "X 换成 Y" / "upgraded to Y" (Chinese after folding to Simplified), and
# what makes such a line no report of a change: a question, a plan, a denial, a hold or a rollback.
CHANGE_ZH = (r"换成|换为|换用|换到|改成|改为|改用|替换成|替换为|切换到|切换成|切换为|切到|切成|迁移到|迁到|"
             r"升级到|升级成|升级为|升到|更新到|更新为")
CHANGE_EN = r"upgrad\w*|updat\w*|bump\w*|migrat\w*|mov(?:e|ed|ing)|switch\w*|chang\w*"
# a release moved: what makes a bare number after a name a version ("upgraded Node from 18 to 20")
UPGRADED = _re(r"\bupgrad", r"\bbump", r"\bupdat", r"\bmigrat", r"升级", r"更新", r"升到", r"迁移")
# a chosen thing changed: what makes "X → Y" a change of tool, not a flow or a mapping
SWITCHED = _re(r"\bswitch", r"\breplac", r"\bmigrat", r"\bmov(?:e|ed|ing) (?:from|to)\b", r"\bswap",
               r"换", r"改用", r"改成", r"改为", r"替换", r"切换", r"迁移")
ASKED = _re(r"[?？]", r"吗", r"要不要", r"要不", r"是否", r"是不是", r"能不能", r"可不可以", r"该不该",
            r"\b(?:should|shall|could|can|would) (?:we|i|you)\b", r"\bwhether\b", r"\bwhat if\b", r"\bhow about\b")
PLANNED = _re(r"\b(?:will|'ll|going to|gonna|plan(?:s|ned|ning)?(?: to)?|want(?:s|ed)? to|intend\w*|consider\w*|"
              r"thinking (?:of|about)|might|maybe|perhaps|may|try(?:ing)? to|let'?s|would like|"
              r"next (?:week|month|time|year|sprint)|tomorrow|someday|eventually|later|if|unless|once)\b",
              r"打算", r"计划", r"准备", r"考虑", r"想要", r"想(?:把|换|改|用|升|试)",
              r"(?<![需主重只])要(?:把|换|改|升|切|迁)",
              r"将要", r"将会", r"下周", r"下个月", r"明天", r"改天", r"回头", r"以后", r"试试", r"试一下", r"尝试",
              r"如果", r"假如", r"等.{0,6}再", r"\btodo\b", r"待")
DENIED = _re(r"\b(?:not|never|no longer|without|cannot)\b", r"n't\b", r"没", r"不", r"别", r"未", r"无法", r"甭")
HELD = _re(r"\bpin(?:s|ned)?\b", r"\block(?:ed)? (?:to|at|on)\b", r"\bstay(?:s|ed|ing)? (?:on|at|with)\b",
           r"\bkeep(?:s|ing)? (?:on|using)\b", r"\broll(?:s|ed|ing)? ?back\b", r"\brevert(?:s|ed|ing)?\b",
           r"\bdowngrad\w*", r"固定", r"锁定", r"锁在", r"保持", r"继续用", r"回滚", r"退回", r"降级", r"降回", r"换回",
           r"改回", r"切回")
