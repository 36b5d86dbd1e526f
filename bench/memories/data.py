"""Vocabulary of the synthetic company and the labelled recall set (zh + en)."""

from __future__ import annotations

DEPTS = ["Sales", "Finance", "Engineering", "Marketing", "Support"]
PROJECTS = ["Apollo", "Zephyr", "Orion", "Atlas", "Hermes", "Nimbus", "Vega", "Titan", "Lyra", "Pulsar"]
CUSTOMERS = ["Vercel", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Acme", "阿里云", "华为", "腾讯",
             "字节跳动", "美团", "京东", "小米", "百度"]  # fmt: skip
TECH = ["PostgreSQL", "Redis", "Kafka", "Kubernetes", "React", "Django", "Rust", "Go", "Terraform", "Grafana"]
COMPONENTS_EN = ["billing export", "login page", "search API", "mobile app", "report builder", "invoice PDF",
                 "audit log", "SSO integration", "data pipeline", "notification service"]  # fmt: skip
COMPONENTS_ZH = [
    "账单导出",
    "登录页面",
    "搜索接口",
    "移动端",
    "报表生成",
    "发票 PDF",
    "审计日志",
    "单点登录",
    "数据管道",
    "消息通知",
]
PREFS_EN = ["short bullet-point answers", "morning meetings", "email over chat", "weekly summaries on Friday",
            "dark mode dashboards", "Python examples", "detailed status reports", "async standups"]  # fmt: skip
PREFS_ZH = [
    "简洁的要点式回答",
    "上午开会",
    "用邮件沟通",
    "周五发周报",
    "深色主题",
    "中文文档",
    "详细的进度汇报",
    "异步站会",
]
ASKS_EN = ["a 10% discount", "annual billing", "a longer trial", "priority support", "an on-prem option",
           "net-60 payment terms", "a dedicated CSM", "SOC 2 reports"]  # fmt: skip
ASKS_ZH = [
    "九折优惠",
    "按年付费",
    "延长试用期",
    "优先支持",
    "私有化部署",
    "60 天账期",
    "专属客户成功经理",
    "安全合规报告",
]
TOPICS_EN = ["the renewal", "pricing", "the Q3 roadmap", "an outage review", "the migration plan", "hiring"]
TOPICS_ZH = ["续约", "定价", "第三季度路线图", "故障复盘", "迁移方案", "招聘计划"]

EN_TEMPLATES = [
    "{person} prefers {pref_en}.",
    "Customer {cust} asked for {ask_en} on the {proj} deal.",
    "{proj} decided to use {tech} for the {comp_en}.",
    "Met {cust} on {date} to discuss {topic_en}.",
    "Ticket {tid} tracks a bug in the {comp_en} of {proj}.",
    "The {comp_en} of {proj} is owned by {person}.",
    "{cust} reported slow responses from the {comp_en} last week.",
]
ZH_TEMPLATES = [
    "{person}喜欢{pref_zh}。",
    "客户{cust}在{proj}项目上希望{ask_zh}。",
    "{proj}项目决定在{comp_zh}中使用 {tech}。",
    "{date_zh}和{cust}开会讨论了{topic_zh}。",
    "工单 {tid} 跟踪 {proj} 的{comp_zh}问题。",
    "{proj} 的{comp_zh}由 {person} 负责。",
    "{cust}反馈上周{comp_zh}响应很慢。",
]

# (memory content, query, kind). The owner is the first bench user (u000), user scope.
LABELLED = [
    ("Invoice INV-2025-0913 from Globex was paid 14 days late.", "INV-2025-0913", "id"),
    ("PRD-2024-013 规定账单导出必须同时支持 CSV 和 JSON。", "PRD-2024-013", "id"),
    (
        "Ticket OPS-7781 is the root cause of the November checkout outage.",
        "what caused the November checkout outage",
        "en",
    ),
    (
        "I am allergic to peanuts, so team dinners must avoid them.",
        "food allergy to remember for team dinner",
        "en",
    ),
    ("我女儿下周三过生日，那天我要早点下班。", "哪天需要提前离开公司", "zh"),
    ("我每天早上八点前不看消息，紧急情况请打电话。", "早上联系不上的时候怎么办", "zh"),
    (
        "My manager wants the pipeline forecast every Monday at 9am.",
        "when is the forecast due each week",
        "en",
    ),
    ("公司年会定在 1 月 18 日，在杭州西湖国宾馆举行。", "年会在哪里举办", "zh"),
    ("The parking garage closes at 11pm on weekdays.", "what time does the car park shut", "en"),
    ("报销超过五千元需要部门总监和财务双签。", "大额报销审批流程", "zh"),
    ("I use a standing desk and need a monitor arm for it.", "ergonomic equipment request", "en"),
    ("新员工入职第一周要完成信息安全培训。", "onboarding security training deadline", "cross"),
    (
        "Our VPN moved to WireGuard; the old OpenVPN profiles stop working in May.",
        "VPN 迁移以后旧配置什么时候失效",
        "cross",
    ),
    ("我更喜欢用飞书文档写方案，不喜欢用 Word。", "preferred tool for writing proposals", "cross"),
    ("The Lisbon office has a quiet room on the third floor.", "where can I take a call in Lisbon", "en"),
    ("客户满意度调查每个季度末发送一次。", "多久发一次客户满意度调查", "zh"),
    (
        "Laptop refresh happens every three years; request it through the IT portal.",
        "how often do we get new laptops",
        "en",
    ),
    ("我对猫毛过敏，出差不要安排有宠物的民宿。", "出差住宿有什么特殊要求", "zh"),
    ("Contract CTR-88120 with Initech auto-renews on 2026-09-30.", "CTR-88120", "id"),
    ("预算编号 BUD-2026-Q2-17 用于采购测试服务器。", "BUD-2026-Q2-17", "id"),
    (
        "Quarterly business reviews with Hooli are always held in person.",
        "do we meet Hooli face to face",
        "en",
    ),
    ("周会纪要统一放在团队空间的“会议记录”目录。", "where are weekly meeting notes stored", "cross"),
    ("The staging database is wiped every Sunday night.", "测试环境数据库多久清空一次", "cross"),
    ("我习惯用 Vim，不要给我推荐 VS Code 插件。", "编辑器偏好", "zh"),
]
